/** `POST /connect/sessions/reconnect`: a session token to re-authorize an existing connection. */
import { unknownConnection } from '../../../../../../connections/errors.js';
import { ConnectSessionResponse, ReconnectSessionBody } from '../../../../schemas/connect.js';
import { defineRoute, type RouteSpec } from '../../../define.js';
import type { RestDeps } from '../../../deps.js';
import { assertKnownIntegrations, sessionAnswer, sessionConfigDefaults } from '../session-answer.js';

export function createReconnectSession(deps: RestDeps): RouteSpec {
  return defineRoute({
    method: 'post',
    path: '/connect/sessions/reconnect',
    operationId: 'createReconnectSession',
    tag: 'Connect',
    summary: 'Create a session token to re-authorize an existing connection',
    body: ReconnectSessionBody,
    responses: { 201: { description: 'The session', schema: ConnectSessionResponse } },
    errors: [400, 401, 404],
    async handle({ body, env }) {
      assertKnownIntegrations(deps, env.namespace, [body.integration_id]);
      const conn = await deps.connections.findConnection(env.namespace, body.integration_id, body.connection_id);
      if (!conn) throw unknownConnection(body.connection_id, body.integration_id);
      const stored = conn.resource.spec.endUser;
      const u = body.end_user;
      const tags = { ...(u?.tags ?? stored?.tags ?? {}), ...(body.tags ?? {}) };
      return sessionAnswer(deps, env, {
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
        ...sessionConfigDefaults(body.integrations_config_defaults, [body.integration_id]),
      });
    },
  });
}
