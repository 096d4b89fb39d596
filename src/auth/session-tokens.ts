import { deriveKey, sealedKind } from './sealed-values.js';

/** What a connect session token carries. */
export interface SessionClaims {
  /** Namespace of the Environment that issued the token. */
  namespace: string;
  /** Random ID of the session (also used to make OAuth state single-use). */
  sid: string;
  endUser: {
    id: string;
    email?: string;
    displayName?: string;
    tags?: Record<string, string>;
    organization?: { id?: string; displayName?: string };
  };
  /** Integration IDs offered; exactly one for a reconnect session. */
  allowedIntegrations: string[];
  /** Set for a reconnect session: the connection to re-authorize. */
  reconnect?: { connectionId: string; integration: string };
  /** Per integration: the scopes asked for instead of the Integration's, and extra authorization parameters (Nango's `integrations_config_defaults`). */
  configDefaults?: Record<string, SessionConfigDefaults>;
  /** Expiry, seconds since the epoch. */
  exp: number;
}

export interface SessionConfigDefaults {
  scopes?: string[];
  authorizationParams?: Record<string, string>;
}

const PREFIX = 'lks_1';
const PURPOSE = 'session-token';
const sealed = sealedKind<SessionClaims>(PURPOSE, PREFIX);

/**
 * Connect session tokens are sealed (see sealed-values.ts) with a key derived from the Environment's
 * secret key, so they are unguessable, tamper-proof, private to the end user's browser, verifiable
 * on any replica and never stored anywhere. Rotating the secret key invalidates outstanding sessions.
 */
export function sealSessionToken(claims: SessionClaims, environmentSecretKey: string): string {
  return sealed.seal(claims, environmentSecretKey);
}

/** The namespace a token claims to come from (unverified: used to find the key to verify it with). */
export const sessionTokenNamespace = (token: string): string | undefined => sealed.namespaceOf(token);

export type OpenResult = { ok: true; claims: SessionClaims } | { ok: false; reason: 'malformed' | 'invalid' | 'expired' };

export function openSessionToken(token: string, environmentSecretKey: string, nowMs: number): OpenResult {
  const result = sealed.open(token, environmentSecretKey, nowMs);
  return result.ok ? { ok: true, claims: result.value } : result;
}

export { deriveKey };
