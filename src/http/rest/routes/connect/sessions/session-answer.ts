/** What both session routes share: the integrations they name checked, and the answer with the new token. */
import type { ResolvedEnvironment } from '../../../../../auth/environment-keys.js';
import type { SessionClaims } from '../../../../../auth/session-tokens.js';
import { issueSessionToken } from '../../../../../connect/session-issue.js';
import { LatchkeyError } from '../../../../../domain/errors.js';
import type { RouteResult } from '../../define.js';
import type { RestDeps } from '../../deps.js';

/** The session's token, its expiry and the Connect UI's link to it (201). */
export function sessionAnswer(
  deps: RestDeps,
  env: ResolvedEnvironment,
  claims: Omit<SessionClaims, 'namespace' | 'sid' | 'exp'>,
): RouteResult {
  const { token, exp } = issueSessionToken(deps, env, claims);
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

/** A 400 naming every integration of `ids` the environment does not have. */
export function assertKnownIntegrations(deps: RestDeps, namespace: string, ids: string[]): void {
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
