/**
 * Auth mode APP_STORE: an App Store Connect API key (issuer ID, key ID, and the private key of the
 * `.p8` file). Each API call carries `Authorization: Bearer <jwt>`, an ES256 token with header `kid`
 * = key ID and claims `iss` = issuer ID, `aud` = `appstoreconnect-v1`, `iat`, `exp`. Apple refuses a
 * token whose `exp` is more than 20 minutes after `iat`; Latchkey mints 19-minute tokens (the
 * Provider's `appStore.lifetimeSeconds`, at most 1200) locally with src/modes/shared/jwt-minting.ts, again
 * when one is about to expire (on fetch and before proxied calls; nothing is scheduled).
 */
import { z } from 'zod';
import type { AppStoreCredentials } from '../../domain/credentials.js';
import { LatchkeyError } from '../../domain/errors.js';
import type { ProviderSpec } from '../../k8s/resources.js';
import { JwtMintError, mintJwt } from '../shared/jwt-minting.js';
import { RefreshError } from '../../auth/refresh/errors.js';
import type { RefreshStrategy } from '../../auth/refresh/strategies.js';

/** Apple's limit on a token's lifetime. */
export const APP_STORE_MAX_LIFETIME_SECONDS = 20 * 60;
/** What Latchkey mints when the Provider does not say: a minute under Apple's limit, for clock skew. */
export const APP_STORE_DEFAULT_LIFETIME_SECONDS = 19 * 60;
export const APP_STORE_AUDIENCE = 'appstoreconnect-v1';

/** The key the end user gives. IDs are plain (no template can hide in them). */
export const AppStoreKey = z.strictObject({
  issuer_id: z
    .string()
    .trim()
    .regex(/^[0-9A-Za-z-]{1,64}$/, 'an issuer ID (a UUID from App Store Connect, Users and Access, Integrations)'),
  key_id: z
    .string()
    .trim()
    .regex(/^[0-9A-Za-z]{1,32}$/, 'a key ID (10 letters and digits)'),
  private_key: z.string().min(1).max(16_384),
});
export type AppStoreKey = z.infer<typeof AppStoreKey>;

export function appStoreLifetimeSeconds(spec: ProviderSpec): number {
  const v = spec.appStore?.lifetimeSeconds;
  return typeof v === 'number' && Number.isInteger(v) && v >= 60 && v <= APP_STORE_MAX_LIFETIME_SECONDS
    ? v
    : APP_STORE_DEFAULT_LIFETIME_SECONDS;
}

/** Credentials with a freshly minted token. Throws {@link JwtMintError} (`invalid_key`) when the key cannot sign ES256. */
export function mintAppStoreCredentials(key: AppStoreKey, spec: ProviderSpec, now: number): AppStoreCredentials {
  const minted = mintJwt({
    modeOptions: {
      algorithm: 'ES256',
      lifetimeSeconds: appStoreLifetimeSeconds(spec),
      header: { kid: key.key_id, typ: 'JWT' },
      claims: { iss: key.issuer_id, aud: APP_STORE_AUDIENCE },
    },
    apiKey: key.private_key,
    connectionConfig: undefined,
    now,
  });
  return { type: 'APP_STORE', ...key, access_token: minted.token, expires_at: minted.expiresAt };
}

/** A key given at import or in a form: checked, and a first token minted; a 400 naming the field otherwise. */
export function appStoreFromInput(
  given: Record<string, unknown>,
  spec: ProviderSpec,
  now: number,
  pathPrefix: string,
): AppStoreCredentials {
  const { type: _type, ...rest } = given;
  const parsed = AppStoreKey.safeParse(rest);
  if (!parsed.success) {
    const errors = parsed.error.issues.map((i) => ({
      path: [pathPrefix, ...i.path.map(String), ...((i as { keys?: string[] }).keys ?? [])].join('.'),
      message: i.code === 'unrecognized_keys' ? 'not an App Store Connect key field' : i.message,
      code: i.code === 'unrecognized_keys' ? 'credentials_type_mismatch' : 'invalid_credentials',
    }));
    throw new LatchkeyError(
      'invalid_input',
      errors[0]!.code,
      `App Store Connect keys have issuer_id, key_id and private_key: ${errors[0]!.path.split('.').pop()}: ${errors[0]!.message}`,
      {
        errors,
      },
    );
  }
  try {
    return mintAppStoreCredentials(parsed.data, spec, now);
  } catch (err) {
    if (!(err instanceof JwtMintError)) throw err;
    throw new LatchkeyError('invalid_input', 'invalid_credentials', `private_key cannot sign App Store Connect tokens: ${err.message}`, {
      errors: [{ path: `${pathPrefix}.private_key`, message: err.message, code: 'invalid_credentials' }],
    });
  }
}

/** APP_STORE: a new token signed with the stored key. */
export const appStoreTokenStrategy: RefreshStrategy = {
  canRefresh: (c) => AppStoreKey.safeParse({ issuer_id: c.issuer_id, key_id: c.key_id, private_key: c.private_key }).success,
  // Minting is local and cheap: scheduling it would rewrite idle connections' Secrets every few minutes.
  renewAhead: false,
  async refresh(input) {
    const c = input.connection.credentials;
    const key = AppStoreKey.parse({ issuer_id: c.issuer_id, key_id: c.key_id, private_key: c.private_key });
    try {
      return { ...c, ...mintAppStoreCredentials(key, input.provider.spec, input.now) };
    } catch (err) {
      if (!(err instanceof JwtMintError)) throw err;
      throw new RefreshError(`the stored App Store Connect key cannot mint a token: ${err.message}`, {
        permanent: true,
        code: 'reauthorization_required',
      });
    }
  },
};
