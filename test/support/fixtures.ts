/** Credentials tests start from: an OAuth 2 connection with real tokens, a sealed Connect session, an OAuth flow's state. */
import { randomBytes } from 'node:crypto';
import type { FlowState } from '../../src/auth/flow-state.js';
import { sealSessionToken, type SessionClaims } from '../../src/auth/session-tokens.js';
import type { StoredConnection, StoreParts } from '../../src/k8s/store.js';
import type { OidcTestServer, TestClient } from '../../dev/peers/oidc-server.js';

/** Imports an OAUTH2 connection with tokens minted by the OAuth server. */
export async function importOAuth2(
  store: StoreParts,
  oidc: OidcTestServer,
  client: TestClient,
  namespace: string,
  integration: string,
  provider: string,
  opts: { connectionId?: string; expiresInMs?: number } = {},
): Promise<{ conn: StoredConnection; refreshToken: string; accessToken: string }> {
  const tokens = await oidc.mintTokens({ clientId: client.clientId });
  const connectionId = opts.connectionId ?? `conn-${randomBytes(4).toString('hex')}`;
  const conn = await store.connections.createConnection({
    namespace,
    spec: { integration, provider, connectionId, authMode: 'OAUTH2', endUser: { id: 'u1' } },
    credentials: {
      type: 'OAUTH2',
      access_token: tokens.accessToken,
      refresh_token: tokens.refreshToken,
      expires_at: new Date(Date.now() + (opts.expiresInMs ?? tokens.expiresIn * 1000)).toISOString(),
      raw: { expires_in: tokens.expiresIn, token_type: 'Bearer' },
    },
  });
  return { conn, refreshToken: tokens.refreshToken, accessToken: tokens.accessToken };
}

/** A Connect session token sealed with the Environment's secret key, valid for ten minutes. */
export function sealSession(secretKey: string, claims: Omit<SessionClaims, 'sid' | 'exp'> & { exp?: number }): string {
  return sealSessionToken({ sid: randomBytes(8).toString('hex'), exp: Math.floor(Date.now() / 1000) + 600, ...claims }, secretKey);
}

/** A Connect session token of the Environment in `namespace` for `endUser` (an ID, or with tags), allowed `integrations`. */
export function sessionFor(
  secretKey: string,
  namespace: string,
  endUser: string | SessionClaims['endUser'],
  allowedIntegrations: string[],
): string {
  return sealSession(secretKey, { namespace, endUser: typeof endUser === 'string' ? { id: endUser } : endUser, allowedIntegrations });
}

/** An OAuth 2 flow's state for team-a's user u1 connecting `github`, with `rest` (the binding hash, expiry, …). */
export function flowState(rest: Pick<FlowState, 'bh' | 'exp'> & Partial<FlowState>): FlowState {
  return {
    namespace: 'team-a',
    sid: 's1',
    fid: 'f1',
    mode: 'OAUTH2',
    integration: 'github',
    endUser: { id: 'u1' },
    connectionConfig: {},
    redirectUri: 'https://x/oauth/callback',
    ...rest,
  };
}
