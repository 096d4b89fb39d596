import { randomBytes } from 'node:crypto';
import { sealSessionToken, type SessionClaims } from '../../../auth/session-tokens.js';
import type { ResolvedEnvironment } from '../../../auth/environment-keys.js';
import { ENVIRONMENT_SECRET_KEYS } from '../../../k8s/resources.js';
import { LatchkeyError } from '../../../domain/errors.js';
import { ConnectSessionBody, ConnectSessionResponse, ReconnectSessionBody } from '../schemas/connect.js';
import { unknownConnection } from './connections.js';
import { defineRoute, type RouteSpec } from './define.js';
import type { RestDeps } from './deps.js';

export function connectSessionRoutes(deps: RestDeps): RouteSpec[] {
  function issue(env: ResolvedEnvironment, claims: Omit<SessionClaims, 'namespace' | 'sid' | 'exp'>) {
    const secretKey = deps.catalog.readSecretValue(env.namespace, env.resource.spec.secretRef.name, ENVIRONMENT_SECRET_KEYS.secretKey);
    if (!secretKey)
      throw new LatchkeyError('unavailable', 'environment_not_ready', "The environment's secret key is not readable; try again");
    const exp = Math.floor(deps.clock.now() / 1000) + deps.config.sessionTtlSeconds;
    const token = sealSessionToken({ ...claims, namespace: env.namespace, sid: randomBytes(16).toString('base64url'), exp }, secretKey);
    return {
      status: 201,
      body: {
        data: {
          token,
          expires_at: new Date(exp * 1000).toISOString(),
          connect_link: `${deps.config.publicBaseUrl}/connect?session_token=${encodeURIComponent(token)}`,
        },
      },
    };
  }

  function unknownIntegrations(namespace: string, ids: string[]): void {
    const unknown = ids.filter((id) => !deps.catalog.getIntegration(namespace, id));
    if (unknown.length) {
      throw new LatchkeyError(
        'invalid_input',
        'unknown_integration',
        `Unknown integration${unknown.length > 1 ? 's' : ''} in this environment: ${unknown.join(', ')}`,
        {
          errors: unknown.map((id) => ({
            path: 'body.allowed_integrations',
            message: `unknown integration ${id}`,
            code: 'unknown_integration',
          })),
        },
      );
    }
  }

  return [
    defineRoute({
      method: 'post',
      path: '/connect/sessions',
      operationId: 'createConnectSession',
      tag: 'Connect',
      summary: 'Create a connect session token for an end user',
      description:
        'The token is short-lived and sealed (verifiable on every replica, stored nowhere). Give it to the frontend, which opens `connect_link`.',
      body: ConnectSessionBody,
      responses: { 201: { description: 'The session', schema: ConnectSessionResponse } },
      errors: [400, 401, 429],
      handle({ body, env }) {
        deps.limits.checkSessionCreation(env.namespace);
        const allowed =
          body.allowed_integrations ??
          deps.catalog
            .listIntegrations(env.namespace)
            .map((i) => i.metadata.name)
            .sort();
        unknownIntegrations(env.namespace, allowed);
        if (!allowed.length) throw new LatchkeyError('invalid_input', 'no_integrations', 'This environment has no integrations to connect');
        const u = body.end_user;
        const tags = { ...(u.tags ?? {}), ...(body.tags ?? {}) };
        return issue(env, {
          endUser: {
            id: u.id,
            ...(u.email !== undefined ? { email: u.email } : {}),
            ...(u.display_name !== undefined ? { displayName: u.display_name } : {}),
            ...(Object.keys(tags).length ? { tags } : {}),
            ...(body.organization ? { organization: { id: body.organization.id, displayName: body.organization.display_name } } : {}),
          },
          allowedIntegrations: [...new Set(allowed)],
        });
      },
    }),
    defineRoute({
      method: 'post',
      path: '/connect/sessions/reconnect',
      operationId: 'createReconnectSession',
      tag: 'Connect',
      summary: 'Create a session token to re-authorize an existing connection',
      body: ReconnectSessionBody,
      responses: { 201: { description: 'The session', schema: ConnectSessionResponse } },
      errors: [400, 401, 404],
      async handle({ body, env }) {
        unknownIntegrations(env.namespace, [body.integration_id]);
        const conn = await deps.connections.findConnection(env.namespace, body.integration_id, body.connection_id);
        if (!conn) throw unknownConnection(body.connection_id, body.integration_id);
        const stored = conn.resource.spec.endUser;
        const u = body.end_user;
        const tags = { ...(u?.tags ?? stored?.tags ?? {}), ...(body.tags ?? {}) };
        return issue(env, {
          endUser: {
            id: u?.id ?? stored?.id ?? body.connection_id,
            ...((u?.email ?? stored?.email) !== undefined ? { email: u?.email ?? stored?.email } : {}),
            ...((u?.display_name ?? stored?.displayName) !== undefined ? { displayName: u?.display_name ?? stored?.displayName } : {}),
            ...(Object.keys(tags).length ? { tags } : {}),
            ...(body.organization
              ? { organization: { id: body.organization.id, displayName: body.organization.display_name } }
              : stored?.organization
                ? { organization: stored.organization }
                : {}),
          },
          allowedIntegrations: [body.integration_id],
          reconnect: { connectionId: body.connection_id, integration: body.integration_id },
        });
      },
    }),
  ];
}
