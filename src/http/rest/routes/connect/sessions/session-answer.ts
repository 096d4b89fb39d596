/** What both session routes share: the integrations they name checked, and the answer with the new token. */
import type { ResolvedEnvironment } from '../../../../../auth/environment-keys.js';
import type { z } from 'zod';
import { scopesOf } from '../../../../../auth/granted-scopes.js';
import type { SessionClaims, SessionConfigDefaults } from '../../../../../auth/session-tokens.js';
import { issueSessionToken } from '../../../../../connect/session-issue.js';
import { LatchkeyError } from '../../../../../domain/errors.js';
import type { IntegrationsConfigDefaults } from '../../../schemas/connect.js';
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

/**
 * Nango's `integrations_config_defaults` as the session keeps them: only integrations the session offers
 * (a 400 names any other), the scopes override split on commas and spaces.
 */
export function sessionConfigDefaults(
  defaults: z.infer<typeof IntegrationsConfigDefaults> | undefined,
  offered: string[],
): Pick<SessionClaims, 'configDefaults'> {
  if (!defaults) return {};
  const stray = Object.keys(defaults).filter((id) => !offered.includes(id));
  if (stray.length)
    throw new LatchkeyError(
      'invalid_input',
      'invalid_input',
      `integrations_config_defaults names integrations this session does not offer: ${stray.join(', ')}`,
      {
        errors: stray.map((id) => ({
          path: `body.integrations_config_defaults.${id}`,
          message: 'not offered by this session',
          code: 'unknown_integration',
        })),
      },
    );
  const out: Record<string, SessionConfigDefaults> = {};
  for (const [id, d] of Object.entries(defaults)) {
    const scopes = scopesOf(d.connection_config?.oauth_scopes_override);
    const params = d.authorization_params && Object.keys(d.authorization_params).length ? d.authorization_params : undefined;
    if (scopes || params) out[id] = { ...(scopes ? { scopes } : {}), ...(params ? { authorizationParams: params } : {}) };
  }
  return Object.keys(out).length ? { configDefaults: out } : {};
}
