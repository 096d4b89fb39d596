/**
 * Auth mode JWT: the provider's API takes a short-lived JSON Web Token that the caller signs with a
 * key of its own (Ghost's Admin API key, App Store Connect's .p8 key). The connection's `apiKey`
 * holds the signing key; the Provider's `modeOptions` describe the token:
 *
 * - `algorithm`: HS256 (shared secret), ES256 (EC P-256 private key) or RS256 (RSA private key);
 * - `secretEncoding` (HS256 only): how the secret is written — `hex` (Ghost), `base64`, or `utf8` (default);
 * - `lifetimeSeconds`: seconds from `iat` to `exp` (default 300);
 * - `header`, `claims`: extra JOSE header fields and claims; string values may use
 *   `${connectionConfig.KEY}`. `alg` always follows `algorithm`, `typ` defaults to `JWT`, and
 *   `iat`/`exp` are always set here (the manifest's own are ignored).
 *
 * Only node:crypto is used. Nothing here logs, and no error message contains key material.
 */
import { createHmac, createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { fillTemplate, MissingTemplateValueError } from '../../catalog/template.js';
import type { JwtCredentials } from '../../domain/credentials.js';
import { ProblemError, type ProblemAnswers } from './problem-error.js';
import { RefreshError } from '../../auth/refresh/errors.js';
import type { RefreshStrategy } from '../../auth/refresh/strategies.js';

export const JWT_ALGORITHMS = ['HS256', 'ES256', 'RS256'] as const;
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

/** The JWT part of a Provider's `modeOptions`. */
export const JwtModeOptions = z.object({
  algorithm: z.enum(JWT_ALGORITHMS),
  secretEncoding: z.enum(['utf8', 'hex', 'base64']).default('utf8'),
  lifetimeSeconds: z.number().int().min(1).max(86_400).default(300),
  header: z.record(z.string(), z.unknown()).default({}),
  claims: z.record(z.string(), z.unknown()).default({}),
});
export type JwtModeOptions = z.infer<typeof JwtModeOptions>;

/**
 * Why a token could not be minted. `invalid_key`: the connection's key cannot sign with the
 * provider's algorithm; `missing_connection_config`: a `${connectionConfig.KEY}` of the header or
 * claims has no value; `provider_misconfigured`: the Provider's `modeOptions` are not usable.
 */
export type JwtMintProblem = 'invalid_key' | 'missing_connection_config' | 'provider_misconfigured';

/** Each problem's kind and code: as an import answers it (src/modes/jwt/mode.ts). */
const MINT_PROBLEMS: ProblemAnswers<JwtMintProblem> = {
  invalid_key: { kind: 'invalid_input', code: 'invalid_credentials' },
  missing_connection_config: { kind: 'invalid_input', code: 'missing_connection_config' },
  provider_misconfigured: { kind: 'unavailable', code: 'integration_misconfigured' },
};

export class JwtMintError extends ProblemError<JwtMintProblem> {
  constructor(
    problem: JwtMintProblem,
    message: string,
    /** For `missing_connection_config`: the configuration keys without a value. */
    readonly keys: string[] = [],
  ) {
    super(problem, MINT_PROBLEMS, message);
    this.name = 'JwtMintError';
  }
}

/** Reads and checks a Provider's `modeOptions` for JWT. */
export function jwtModeOptions(modeOptions: unknown, provider = 'the provider'): JwtModeOptions {
  const parsed = JwtModeOptions.safeParse(modeOptions ?? {});
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0];
  const where = first ? `modeOptions.${first.path.map(String).join('.')}: ${first.message}` : 'modeOptions';
  throw new JwtMintError('provider_misconfigured', `${provider} has unusable JWT settings (${where})`);
}

// ---- keys ----

type SigningKey = { kind: 'hmac'; secret: Buffer } | { kind: 'private'; key: KeyObject };

const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

function hmacSecret(apiKey: string, encoding: JwtModeOptions['secretEncoding']): Buffer {
  const s = apiKey.trim();
  let secret: Buffer;
  if (encoding === 'hex') {
    if (!HEX.test(s)) {
      const hint = s.includes(':')
        ? ' It contains a colon: give only the secret after the colon (the key ID before it is connection configuration).'
        : '';
      throw new JwtMintError('invalid_key', `The signing key must be a hex-encoded secret.${hint}`);
    }
    secret = Buffer.from(s, 'hex');
  } else if (encoding === 'base64') {
    if (!BASE64.test(s)) throw new JwtMintError('invalid_key', 'The signing key must be a base64-encoded secret.');
    secret = Buffer.from(s, 'base64');
  } else {
    secret = Buffer.from(apiKey, 'utf8');
  }
  if (secret.length === 0) throw new JwtMintError('invalid_key', 'The signing key is empty.');
  return secret;
}

/**
 * A private key from what a person pastes: a PEM file as is, a PEM whose line breaks were lost (a
 * one-line form field) or written as `\n`, or the bare base64 of a PKCS#8 DER key.
 */
function parsePrivateKey(text: string): KeyObject {
  const s = text.replace(/\\n/g, '\n').trim();
  const pem = /-----BEGIN ([A-Z0-9 ]{1,40})-----([\s\S]*?)-----END \1-----/.exec(s);
  const body = (pem ? pem[2]! : s).replace(/\s+/g, '');
  if (!body || !BASE64.test(body)) throw new Error('not PEM or base64');
  if (pem) {
    const lines = body.match(/.{1,64}/g)!.join('\n');
    return createPrivateKey(`-----BEGIN ${pem[1]}-----\n${lines}\n-----END ${pem[1]}-----\n`);
  }
  return createPrivateKey({ key: Buffer.from(body, 'base64'), format: 'der', type: 'pkcs8' });
}

function privateKey(apiKey: string, algorithm: 'ES256' | 'RS256'): KeyObject {
  const expected =
    algorithm === 'ES256'
      ? 'The signing key must be an EC P-256 private key in PEM (for example the contents of a .p8 file).'
      : 'The signing key must be an RSA private key (2048 bits or more) in PEM.';
  let key: KeyObject;
  try {
    key = parsePrivateKey(apiKey);
  } catch {
    throw new JwtMintError('invalid_key', `${expected} It could not be read as a private key.`);
  }
  const details = key.asymmetricKeyDetails;
  const fits =
    algorithm === 'ES256'
      ? key.asymmetricKeyType === 'ec' && details?.namedCurve === 'prime256v1'
      : key.asymmetricKeyType === 'rsa' && (details?.modulusLength ?? 0) >= 2048;
  if (!fits)
    throw new JwtMintError(
      'invalid_key',
      `${expected} This is a ${key.asymmetricKeyType ?? 'different'} key${details?.namedCurve ? ` on curve ${details.namedCurve}` : ''}.`,
    );
  return key;
}

function signingKey(apiKey: string, options: JwtModeOptions): SigningKey {
  if (typeof apiKey !== 'string' || apiKey.trim() === '') throw new JwtMintError('invalid_key', 'The signing key is empty.');
  if (options.algorithm === 'HS256') return { kind: 'hmac', secret: hmacSecret(apiKey, options.secretEncoding) };
  return { kind: 'private', key: privateKey(apiKey, options.algorithm) };
}

/** Throws {@link JwtMintError} (`invalid_key`) unless the key can sign with the provider's algorithm. */
export function checkSigningKey(apiKey: string, options: JwtModeOptions): void {
  signingKey(apiKey, options);
}

function signature(algorithm: JwtAlgorithm, key: SigningKey, input: Buffer): Buffer {
  if (key.kind === 'hmac') return createHmac('sha256', key.secret).update(input).digest();
  // JWS wants ECDSA signatures as the fixed-size r || s (RFC 7518 section 3.4), not DER.
  return algorithm === 'ES256' ? sign('sha256', input, { key: key.key, dsaEncoding: 'ieee-p1363' }) : sign('sha256', input, key.key);
}

// ---- templates ----

/** Fills `${connectionConfig.KEY}` in every string of a header/claims value (objects and arrays too). */
function fillValue(value: unknown, config: Record<string, unknown> | undefined, missing: Set<string>): unknown {
  if (typeof value === 'string') {
    try {
      return fillTemplate(value, config, { encode: false });
    } catch (err) {
      if (!(err instanceof MissingTemplateValueError)) throw err;
      for (const k of err.keys) missing.add(k);
      return value;
    }
  }
  if (Array.isArray(value)) return value.map((v) => fillValue(v, config, missing));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillValue(v, config, missing)]));
  }
  return value;
}

// ---- minting ----

export interface MintInput {
  /** The Provider's `modeOptions` (checked here). */
  modeOptions: unknown;
  /** The connection's signing key. */
  apiKey: string;
  connectionConfig: Record<string, unknown> | undefined;
  /** ms since the epoch. */
  now: number;
  /** For error messages. */
  provider?: string;
}

export interface MintedJwt {
  token: string;
  /** ISO time of the token's `exp`. */
  expiresAt: string;
}

const b64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/** Signs a new token. Throws {@link JwtMintError}. */
export function mintJwt(input: MintInput): MintedJwt {
  const options = jwtModeOptions(input.modeOptions, input.provider);
  const key = signingKey(input.apiKey, options);
  const missing = new Set<string>();
  const header = fillValue(options.header, input.connectionConfig, missing) as Record<string, unknown>;
  const claims = fillValue(options.claims, input.connectionConfig, missing) as Record<string, unknown>;
  if (missing.size) {
    const keys = [...missing];
    throw new JwtMintError(
      'missing_connection_config',
      `The token needs connection configuration ${keys.map((k) => `"${k}"`).join(', ')}`,
      keys,
    );
  }
  const iat = Math.floor(input.now / 1000);
  const exp = iat + options.lifetimeSeconds;
  const signingInput = `${b64url(JSON.stringify({ typ: 'JWT', ...header, alg: options.algorithm }))}.${b64url(JSON.stringify({ ...claims, iat, exp }))}`;
  const sig = signature(options.algorithm, key, Buffer.from(signingInput));
  return { token: `${signingInput}.${b64url(sig)}`, expiresAt: new Date(exp * 1000).toISOString() };
}

/** JWT credentials with a freshly minted token (what an import or the Connect UI form stores). Throws {@link JwtMintError}. */
export function mintJwtCredentials(input: MintInput): JwtCredentials {
  const minted = mintJwt(input);
  return { type: 'JWT', apiKey: input.apiKey, token: minted.token, expires_at: minted.expiresAt };
}

/** A failed mint as the refresher reports it: permanent, since minting again gives the same answer. */
function refreshErrorOf(err: JwtMintError): RefreshError {
  if (err.problem === 'provider_misconfigured')
    return new RefreshError(err.message, { permanent: true, code: 'integration_misconfigured' });
  return new RefreshError(`the stored JWT credentials cannot mint a token: ${err.message}`, {
    permanent: true,
    code: 'reauthorization_required',
  });
}

/**
 * JWT: a new token signed with the stored key (the JWT mode's strategy, src/modes/jwt/mode.ts);
 * the refresher calls it when the stored token is about to expire (or on `force`).
 */
export const jwtMintingStrategy: RefreshStrategy = {
  canRefresh: (c) => typeof c.apiKey === 'string' && c.apiKey.length > 0,
  // Minting is local and cheap: scheduling it would rewrite idle connections' Secrets every few minutes.
  renewAhead: false,
  async refresh(input) {
    const current = input.connection.credentials;
    try {
      const minted = mintJwt({
        modeOptions: input.provider.spec.modeOptions,
        apiKey: current.apiKey as string,
        connectionConfig: input.connection.resource.spec.connectionConfig,
        now: input.now,
        provider: `provider ${input.provider.metadata.name}`,
      });
      return { ...current, type: 'JWT', token: minted.token, expires_at: minted.expiresAt };
    } catch (err) {
      throw err instanceof JwtMintError ? refreshErrorOf(err) : err;
    }
  },
};
