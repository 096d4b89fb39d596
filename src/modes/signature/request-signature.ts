/**
 * Auth mode SIGNATURE: a value computed from the connection's stored secrets for each request,
 * instead of a token the provider issues. The one protocol so far is WSSE UsernameToken as Emarsys
 * (Core API v2) defines it:
 *
 *   X-WSSE: UsernameToken Username="<user>", PasswordDigest="<digest>", Nonce="<nonce>", Created="<time>"
 *   digest = base64( hex( sha1( nonce + created + secret ) ) )
 *
 * (Emarsys hashes to lower-case hex first and base64-encodes that text, not the raw 20 bytes.) The
 * nonce is 32 random hex characters and must not be reused; `Created` is ISO 8601 UTC, and the
 * provider refuses a value older than its window (Emarsys: 5 minutes) — the token's lifetime here.
 *
 * The proxy computes a fresh value per request (a retry gets a new nonce); fetch shows a freshly
 * computed one with its `expires_at`, for callers that call the provider themselves. Nothing of it is
 * stored, and nothing here logs.
 */
import { createHash, randomBytes } from 'node:crypto';
import { LatchkeyError } from '../../domain/errors.js';
import type { ProviderSpec } from '../../k8s/resources.js';

export const SIGNATURE_PROTOCOLS = ['WSSE'] as const;

/**
 * The SIGNATURE part of a Provider's spec (`spec.signature`): `protocol`; `lifetimeSeconds`, how long
 * the provider accepts a value after its `Created` time (default 300); `header`, where the proxy puts
 * it when the Provider's `proxy.headers` do not place `${accessToken}` (default `x-wsse`).
 */
export type SignatureSettings = NonNullable<ProviderSpec['signature']>;
export const DEFAULT_SIGNATURE_HEADER = 'x-wsse';

export const DEFAULT_SIGNATURE_LIFETIME_SECONDS = 300;

export interface ComputedSignature {
  token: string;
  /** ISO time after which the provider no longer accepts it. */
  expiresAt: string;
}

/** The WSSE PasswordDigest (exported for the tests' independent check). */
export function wssePasswordDigest(nonce: string, created: string, secret: string): string {
  const hex = createHash('sha1').update(`${nonce}${created}${secret}`, 'utf8').digest('hex');
  return Buffer.from(hex, 'utf8').toString('base64');
}

/** A header value cannot carry a quote or line break inside the quoted Username. */
const UNSAFE = /["\r\n\0]/;

/** A new WSSE UsernameToken for `now` (ms). */
export function wsseToken(
  username: string,
  secret: string,
  now: number,
  lifetimeSeconds = DEFAULT_SIGNATURE_LIFETIME_SECONDS,
): ComputedSignature {
  if (UNSAFE.test(username))
    throw new LatchkeyError('invalid_input', 'invalid_credentials', 'The WSSE username contains a quote or a control character');
  const nonce = randomBytes(16).toString('hex');
  // Whole seconds, as Emarsys' examples write it (2019-10-14T00:00:00Z).
  const created = new Date(Math.floor(now / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  const digest = wssePasswordDigest(nonce, created, secret);
  return {
    token: `UsernameToken Username="${username}", PasswordDigest="${digest}", Nonce="${nonce}", Created="${created}"`,
    expiresAt: new Date(Math.floor(now / 1000) * 1000 + lifetimeSeconds * 1000).toISOString(),
  };
}

/** Computes the provider's signature from SIGNATURE credentials. Throws a LatchkeyError (400/503 kinds) naming what is missing. */
export function computeSignature(
  settings: SignatureSettings | undefined,
  credentials: Record<string, unknown>,
  now: number,
): ComputedSignature {
  if (!settings || !(SIGNATURE_PROTOCOLS as readonly string[]).includes(settings.protocol))
    throw new LatchkeyError(
      'unavailable',
      'integration_misconfigured',
      'The provider does not say which signature protocol it uses (spec.signature.protocol)',
    );
  const { username, password } = credentials;
  if (typeof username !== 'string' || !username || typeof password !== 'string')
    throw new LatchkeyError('invalid_input', 'missing_credentials', 'The connection has no username and secret to sign with');
  return wsseToken(username, password, now, settings.lifetimeSeconds ?? DEFAULT_SIGNATURE_LIFETIME_SECONDS);
}

/** SIGNATURE credentials with a freshly computed `token` and its `expires_at` (what fetch shows and the proxy's `${accessToken}` is). */
export function withFreshSignature<C extends { type: string } & Record<string, unknown>>(
  settings: SignatureSettings | undefined,
  credentials: C,
  now: number,
): C {
  const computed = computeSignature(settings, credentials, now);
  return { ...credentials, token: computed.token, expires_at: computed.expiresAt };
}
