import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

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
  /** Expiry, seconds since the epoch. */
  exp: number;
}

const PREFIX = 'lks_';
const VERSION = 1;

/**
 * Connect session tokens are sealed (AES-256-GCM) with a key derived from the Environment's secret
 * key, so they are unguessable, tamper-proof, private to the end user's browser, verifiable on any
 * replica and never stored anywhere. Rotating the secret key invalidates outstanding sessions.
 */
export function sealSessionToken(claims: SessionClaims, environmentSecretKey: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', deriveKey(environmentSecretKey, 'session-token'), iv);
  cipher.setAAD(Buffer.from(claims.namespace));
  const body = Buffer.concat([cipher.update(JSON.stringify(claims), 'utf8'), cipher.final()]);
  const ns = Buffer.from(claims.namespace, 'utf8').toString('base64url');
  return `${PREFIX}${VERSION}.${ns}.${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
}

/** The namespace a token claims to come from (unverified: used to find the key to verify it with). */
export function sessionTokenNamespace(token: string): string | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== `${PREFIX}${VERSION}`) return undefined;
  const ns = Buffer.from(parts[1]!, 'base64url').toString('utf8');
  return /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns) ? ns : undefined;
}

export type OpenResult = { ok: true; claims: SessionClaims } | { ok: false; reason: 'malformed' | 'invalid' | 'expired' };

export function openSessionToken(token: string, environmentSecretKey: string, nowMs: number): OpenResult {
  const namespace = sessionTokenNamespace(token);
  if (!namespace) return { ok: false, reason: 'malformed' };
  const raw = Buffer.from(token.split('.')[2]!, 'base64url');
  if (raw.length < 12 + 16 + 2) return { ok: false, reason: 'malformed' };
  try {
    const decipher = createDecipheriv('aes-256-gcm', deriveKey(environmentSecretKey, 'session-token'), raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(namespace));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    const json = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString('utf8');
    const claims = JSON.parse(json) as SessionClaims;
    if (claims.namespace !== namespace) return { ok: false, reason: 'invalid' };
    if (claims.exp * 1000 <= nowMs) return { ok: false, reason: 'expired' };
    return { ok: true, claims };
  } catch {
    return { ok: false, reason: 'invalid' };
  }
}

/** A purpose-bound key derived from an Environment's secret key (HKDF-SHA256). */
export function deriveKey(environmentSecretKey: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', environmentSecretKey, 'latchkey', `latchkey ${purpose} v1`, 32));
}
