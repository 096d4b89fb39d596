/** `POST /connect/sessions`: a connect session token for an end user. */
import { LatchkeyError } from '../../../../../domain/errors.js';
import { ConnectSessionBody, ConnectSessionResponse } from '../../../schemas/connect.js';
import { defineRoute, type RouteSpec } from '../../define.js';
import type { RestDeps } from '../../deps.js';
import { assertKnownIntegrations, sessionAnswer, sessionConfigDefaults } from './session-answer.js';

export function createConnectSession(deps: RestDeps): RouteSpec {
  return defineRoute({
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
      assertKnownIntegrations(deps, env.namespace, allowed);
      if (!allowed.length) throw new LatchkeyError('invalid_input', 'no_integrations', 'This environment has no integrations to connect');
      const u = body.end_user;
      const tags = { ...(u.tags ?? {}), ...(body.tags ?? {}) };
      return sessionAnswer(deps, env, {
        endUser: {
          id: u.id,
          ...(u.email !== undefined ? { email: u.email } : {}),
          ...(u.display_name !== undefined ? { displayName: u.display_name } : {}),
          ...(Object.keys(tags).length ? { tags } : {}),
          ...(body.organization ? { organization: { id: body.organization.id, displayName: body.organization.display_name } } : {}),
        },
        allowedIntegrations: [...new Set(allowed)],
        ...sessionConfigDefaults(body.integrations_config_defaults, allowed),
      });
    },
  });
}
