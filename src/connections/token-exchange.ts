/**
 * What an RFC 8693 token exchange hands out for a connection: its provider's current access token,
 * refreshed first when due (the fetch's rule), never a refresh token. No HTTP here
 * (src/http/token-exchange.ts speaks OAuth).
 */
import type { StoredCredentials } from '../k8s/store.js';
import type { TokenRefresher } from '../auth/refresh/token-refresher.js';
import type { Clock } from '../domain/clock.js';
import { LatchkeyError } from '../domain/errors.js';

export interface ExchangedToken {
  accessToken: string;
  /** Seconds left, when the credentials say when it expires. */
  expiresIn?: number;
}

/** The field holding the token a provider accepts as a bearer, per credential type (the others hold no such token). */
const ACCESS_TOKEN_FIELD: Partial<Record<StoredCredentials['type'], string>> = {
  OAUTH2: 'access_token',
  OAUTH2_CC: 'token',
  APP: 'access_token',
  CUSTOM: 'access_token',
  JWT: 'token',
  APP_STORE: 'access_token',
  TWO_STEP: 'token',
};

/** The access token of stored credentials and when it expires, or undefined when they hold none (an API key, a password, OAuth 1). */
export function accessTokenOf(credentials: StoredCredentials): { token: string; expiresAt?: string } | undefined {
  const field = ACCESS_TOKEN_FIELD[credentials.type];
  const c = credentials as Record<string, unknown>;
  const token = field ? c[field] : undefined;
  if (typeof token !== 'string' || !token) return undefined;
  return { token, ...(typeof c.expires_at === 'string' ? { expiresAt: c.expires_at } : {}) };
}

/**
 * The connection's access token, refreshed first when due. Throws the refresher's errors
 * (`unknown_connection`, `RefreshError`) and a `not_exchangeable` LatchkeyError when the
 * connection's credentials hold no access token.
 */
export async function exchangeForAccessToken(
  deps: { refresher: TokenRefresher; clock: Clock },
  namespace: string,
  integration: string,
  connectionId: string,
): Promise<ExchangedToken> {
  const conn = await deps.refresher.ensureFresh(namespace, integration, connectionId, { force: false, reason: 'fetch' });
  const token = accessTokenOf(conn.credentials);
  if (!token)
    throw new LatchkeyError(
      'invalid_input',
      'not_exchangeable',
      `The connection's credentials (${conn.credentials.type}) hold no access token; fetch them with GET /connections/{connectionId}`,
    );
  const expiresAt = token.expiresAt ? Date.parse(token.expiresAt) : NaN;
  return {
    accessToken: token.token,
    ...(Number.isFinite(expiresAt) ? { expiresIn: Math.max(0, Math.floor((expiresAt - deps.clock.now()) / 1000)) } : {}),
  };
}
