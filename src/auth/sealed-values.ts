import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** What every sealed value carries: the namespace whose Environment key seals it, and an expiry. */
export interface SealedClaims {
  namespace: string;
  /** Expiry, seconds since the epoch. */
  exp: number;
}

export type UnsealResult<T> = { ok: true; value: T } | { ok: false; reason: 'malformed' | 'invalid' | 'expired' };

const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * Values sealed with AES-256-GCM under a purpose-bound key derived from an Environment's secret key:
 * unguessable, tamper-proof, unreadable outside Latchkey, verifiable on any replica and stored
 * nowhere. The namespace travels in clear (it selects the key) and is bound as associated data.
 * Format: `<prefix>.<base64url namespace>.<base64url iv|ciphertext|tag>`.
 */
export function seal<T extends SealedClaims>(claims: T, environmentSecretKey: string, purpose: string, prefix: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', deriveKey(environmentSecretKey, purpose), iv);
  cipher.setAAD(Buffer.from(claims.namespace));
  const body = Buffer.concat([cipher.update(JSON.stringify(claims), 'utf8'), cipher.final()]);
  const ns = Buffer.from(claims.namespace, 'utf8').toString('base64url');
  return `${prefix}.${ns}.${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
}

/** The namespace a sealed value claims (unverified: it only selects the key that verifies it). */
export function sealedNamespace(value: string, prefix: string): string | undefined {
  const parts = value.split('.');
  if (parts.length !== 3 || parts[0] !== prefix) return undefined;
  const ns = Buffer.from(parts[1]!, 'base64url').toString('utf8');
  return NAMESPACE.test(ns) ? ns : undefined;
}

export function unseal<T extends SealedClaims>(
  value: string,
  environmentSecretKey: string,
  purpose: string,
  prefix: string,
  nowMs: number,
): UnsealResult<T> {
  const namespace = sealedNamespace(value, prefix);
  if (!namespace) return { ok: false, reason: 'malformed' };
  const raw = Buffer.from(value.split('.')[2]!, 'base64url');
  if (raw.length < 12 + 16 + 2) return { ok: false, reason: 'malformed' };
  try {
    const decipher = createDecipheriv('aes-256-gcm', deriveKey(environmentSecretKey, purpose), raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(namespace));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    const json = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString('utf8');
    const claims = JSON.parse(json) as T;
    if (claims.namespace !== namespace) return { ok: false, reason: 'invalid' };
    if (claims.exp * 1000 <= nowMs) return { ok: false, reason: 'expired' };
    return { ok: true, value: claims };
  } catch {
    return { ok: false, reason: 'invalid' };
  }
}

/** One kind of sealed value (session tokens, flow state, dashboard sessions): its purpose and prefix, bound once. */
export interface SealedKind<T extends SealedClaims> {
  seal(claims: T, environmentSecretKey: string): string;
  /** The namespace a value claims (unverified: it only selects the key that verifies it). */
  namespaceOf(value: string): string | undefined;
  open(value: string, environmentSecretKey: string, nowMs: number): UnsealResult<T>;
}

export function sealedKind<T extends SealedClaims>(purpose: string, prefix: string): SealedKind<T> {
  return {
    seal: (claims, key) => seal(claims, key, purpose, prefix),
    namespaceOf: (value) => sealedNamespace(value, prefix),
    open: (value, key, nowMs) => unseal<T>(value, key, purpose, prefix, nowMs),
  };
}

/** A purpose-bound key derived from an Environment's secret key (HKDF-SHA256). */
export function deriveKey(environmentSecretKey: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', environmentSecretKey, 'latchkey', `latchkey ${purpose} v1`, 32));
}
