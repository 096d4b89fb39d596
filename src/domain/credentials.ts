import { z } from 'zod';
import { answerTooLargeError } from './errors.js';
import { MINTED_TOKEN_FIELD, type AuthMode } from './auth-modes.js';

/**
 * Credentials as stored in a connection's Secret (`credentials.json`). The stored JSON is the shape
 * the REST API returns (the official Nango client's `ApiPublicAllAuthCredentials`), plus private
 * fields the API never returns (listed in {@link PRIVATE_FIELDS}), with each token once in the Secret
 * (src/k8s/stored-credentials.ts: read back to this shape).
 */

const raw = z.record(z.string(), z.unknown());
const isoTime = z.iso.datetime({ offset: true });

/** The scopes the provider granted (its answer's `scope`, else those requested: src/auth/granted-scopes.ts). Private: GET /connections/{id} shows them beside the credentials. */
const GrantedScopes = z.array(z.string());

/** Client overrides from the deprecated import (`oauth_client_id_override` / `oauth_client_secret_override`). Private. */
export const ClientOverride = z.object({ client_id: z.string().optional(), client_secret: z.string().optional() });

export const OAuth2Credentials = z.object({
  type: z.literal('OAUTH2'),
  access_token: z.string(),
  refresh_token: z.string().optional(),
  expires_at: isoTime.optional(),
  raw,
  config_override: ClientOverride.optional(),
  granted_scopes: GrantedScopes.optional(),
});
export const OAuth1Credentials = z.object({
  type: z.literal('OAUTH1'),
  oauth_token: z.string(),
  oauth_token_secret: z.string(),
  raw,
});
export const ApiKeyCredentials = z.object({ type: z.literal('API_KEY'), apiKey: z.string() });
export const BasicCredentials = z.object({ type: z.literal('BASIC'), username: z.string(), password: z.string() });
export const OAuth2ClientCredentials = z.object({
  type: z.literal('OAUTH2_CC'),
  token: z.string(),
  expires_at: isoTime.optional(),
  client_id: z.string(),
  client_secret: z.string(),
  raw,
  granted_scopes: GrantedScopes.optional(),
});
export const AppCredentials = z.object({
  type: z.literal('APP'),
  access_token: z.string(),
  expires_at: isoTime.optional(),
  raw,
});
/** CUSTOM: the user token of an app with user authorization (GitHub: 8 hours, with a 6-month refresh token). */
export const AppUserToken = z.object({
  access_token: z.string(),
  refresh_token: z.string().optional(),
  expires_at: isoTime.optional(),
  refresh_token_expires_at: isoTime.optional(),
  raw,
});
/**
 * CUSTOM (an app installation with user authorization): `access_token` is the installation token (what
 * the proxy sends), `installation_expires_at` its expiry; `user` the user's token; `expires_at` the
 * earlier of both expiries, so the renewal comes before either lapses.
 */
export const CustomAppCredentials = z.object({
  type: z.literal('CUSTOM'),
  access_token: z.string(),
  expires_at: isoTime.optional(),
  installation_expires_at: isoTime.optional(),
  raw,
  user: AppUserToken,
});
/** JWT: `apiKey` is the signing key; `token` the last minted JWT (the proxy's `${accessToken}`), valid until `expires_at`. */
export const JwtCredentials = z.object({
  type: z.literal('JWT'),
  apiKey: z.string(),
  token: z.string().optional(),
  expires_at: isoTime.optional(),
});
export const NoCredentials = z.object({ type: z.literal('NONE') });
/**
 * TWO_STEP: the end user's fields (named by the Provider's `twoStep.credentialFields`) sit at the top
 * level next to `token`, the last token the provider's token endpoint gave for them, valid until `expires_at`.
 */
export const TwoStepCredentials = z.object({
  type: z.literal('TWO_STEP'),
  token: z.string().optional(),
  expires_at: isoTime.optional(),
  raw: raw.optional(),
});
/** BILL: the Bill.com sign-in and the session it gave (`session_id`), renewed before `expires_at`. */
export const BillCredentials = z.object({
  type: z.literal('BILL'),
  username: z.string(),
  password: z.string(),
  organization_id: z.string(),
  dev_key: z.string(),
  session_id: z.string().optional(),
  user_id: z.string().optional(),
  expires_at: isoTime.optional(),
});
/** APP_STORE: an App Store Connect API key; `access_token` is the last ES256 token minted from it. */
export const AppStoreCredentials = z.object({
  type: z.literal('APP_STORE'),
  issuer_id: z.string(),
  key_id: z.string(),
  private_key: z.string(),
  access_token: z.string().optional(),
  expires_at: isoTime.optional(),
});
/**
 * TBA (NetSuite token-based authentication, OAuth 1.0a signed per request): the connection's token
 * ID and secret; the consumer key and secret are the Integration's client credentials unless the
 * import gave `config_override` (private, like OAuth 2's).
 */
export const TbaCredentials = z.object({
  type: z.literal('TBA'),
  token_id: z.string(),
  token_secret: z.string(),
  config_override: ClientOverride.optional(),
});
/**
 * SIGNATURE: the stored secrets a per-request signature is computed from (WSSE: username and
 * secret). `token`/`expires_at` are never stored: fetch shows a freshly computed one.
 */
export const SignatureCredentials = z.object({
  type: z.literal('SIGNATURE'),
  username: z.string(),
  password: z.string(),
  token: z.string().optional(),
  expires_at: isoTime.optional(),
});

/** INSTALL_PLUGIN: the credential the provider's signed install callback carried (`apiKey`), and the callback's other fields in `raw`. */
export const InstallPluginCredentials = z.object({ type: z.literal('INSTALL_PLUGIN'), apiKey: z.string(), raw: raw.optional() });
/**
 * MCP_OAUTH2: OAuth 2 tokens for a remote MCP server, and in `mcp` what was discovered to renew them (the
 * authorization server, its token endpoint, the resource the tokens are for, the client that asked).
 * A client the connection's flow registered (Client ID Metadata Document, RFC 7591) is `config_override`.
 */
export const McpOAuth2Credentials = z.object({
  type: z.literal('MCP_OAUTH2'),
  access_token: z.string(),
  refresh_token: z.string().optional(),
  expires_at: isoTime.optional(),
  raw: raw.optional(),
  mcp: z
    .object({
      server_url: z.string(),
      resource: z.string(),
      issuer: z.string(),
      token_endpoint: z.string(),
      client_registration: z.enum(['pre-registered', 'metadata-document', 'dynamic']),
      scope: z.string().optional(),
      /** How the client authenticates at the token endpoint when it is confidential. */
      token_endpoint_auth_method: z.enum(['client_secret_post', 'client_secret_basic']).optional(),
    })
    .optional(),
  config_override: ClientOverride.optional(),
});

/** Every credential shape Latchkey stores, discriminated by `type`. Unknown fields are kept (loose). */
export const StoredCredentialsSchema = z.discriminatedUnion('type', [
  OAuth2Credentials.loose(),
  OAuth1Credentials.loose(),
  ApiKeyCredentials.loose(),
  BasicCredentials.loose(),
  OAuth2ClientCredentials.loose(),
  AppCredentials.loose(),
  CustomAppCredentials.loose(),
  JwtCredentials.loose(),
  NoCredentials.loose(),
  TwoStepCredentials.loose(),
  BillCredentials.loose(),
  AppStoreCredentials.loose(),
  TbaCredentials.loose(),
  SignatureCredentials.loose(),
  InstallPluginCredentials.loose(),
  McpOAuth2Credentials.loose(),
]);

export type OAuth2Credentials = z.infer<typeof OAuth2Credentials>;
export type McpOAuth2Credentials = z.infer<typeof McpOAuth2Credentials>;
export type OAuth1Credentials = z.infer<typeof OAuth1Credentials>;
export type ApiKeyCredentials = z.infer<typeof ApiKeyCredentials>;
export type BasicCredentials = z.infer<typeof BasicCredentials>;
export type OAuth2ClientCredentials = z.infer<typeof OAuth2ClientCredentials>;
export type AppCredentials = z.infer<typeof AppCredentials>;
export type JwtCredentials = z.infer<typeof JwtCredentials>;
export type TwoStepCredentials = z.infer<typeof TwoStepCredentials>;
export type BillCredentials = z.infer<typeof BillCredentials>;
export type AppStoreCredentials = z.infer<typeof AppStoreCredentials>;
export type TbaCredentials = z.infer<typeof TbaCredentials>;
export type SignatureCredentials = z.infer<typeof SignatureCredentials>;
export type CustomAppCredentials = z.infer<typeof CustomAppCredentials>;
export type Credentials = z.infer<typeof StoredCredentialsSchema>;
export type CredentialsType = Credentials['type'];

/** Fields kept in the Secret that the API never returns. */
export const PRIVATE_FIELDS = ['config_override', 'granted_scopes'] as const;

/** Keys holding a refresh token (left out of responses unless asked for, also inside `raw`). */
const REFRESH_TOKEN_KEYS = ['refresh_token', 'refreshToken'];

/**
 * The credentials as the REST API shows them: private fields removed, and the refresh token
 * (top level and inside `raw`) removed unless `includeRefreshToken`.
 */
export function toPublicCredentials(
  stored: { type: string } & Record<string, unknown>,
  opts: { includeRefreshToken: boolean },
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...stored };
  for (const k of PRIVATE_FIELDS) delete out[k];
  if (!opts.includeRefreshToken) {
    for (const k of REFRESH_TOKEN_KEYS) delete out[k];
    if (out.raw && typeof out.raw === 'object' && !Array.isArray(out.raw)) {
      const r = { ...(out.raw as Record<string, unknown>) };
      for (const k of REFRESH_TOKEN_KEYS) delete r[k];
      out.raw = r;
    }
    // CUSTOM keeps the user's token in `user`: its refresh token is as private as a top-level one.
    if (out.user && typeof out.user === 'object' && !Array.isArray(out.user)) {
      out.user = toPublicCredentials({ type: 'user', ...(out.user as Record<string, unknown>) }, opts);
      delete (out.user as Record<string, unknown>).type;
    }
  }
  return out;
}

/** Expiry of the access token (or client-credentials / app token), if the credentials have one. */
export function expiresAtOf(credentials: { type: string } & Record<string, unknown>): Date | undefined {
  const v = credentials.expires_at;
  if (typeof v !== 'string') return undefined;
  const t = Date.parse(v);
  return Number.isFinite(t) ? new Date(t) : undefined;
}

/**
 * Lifetime the provider gave the current token (seconds), from the raw token response when present;
 * for a minted JWT, its own `exp` − `iat`.
 */
export function lifetimeSecondsOf(credentials: { type: string } & Record<string, unknown>): number | undefined {
  const minted = Object.hasOwn(MINTED_TOKEN_FIELD, credentials.type) ? MINTED_TOKEN_FIELD[credentials.type as AuthMode] : undefined;
  if (minted) return jwtLifetimeSeconds(credentials[minted]);
  const r = credentials.raw as Record<string, unknown> | undefined;
  const v = r?.expires_in;
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN;
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/** `exp` − `iat` of a compact JWT (its payload is read, not verified), or undefined. */
function jwtLifetimeSeconds(token: unknown): number | undefined {
  if (typeof token !== 'string') return undefined;
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { iat?: unknown; exp?: unknown };
    const n = typeof payload.exp === 'number' && typeof payload.iat === 'number' ? payload.exp - payload.iat : NaN;
    return Number.isFinite(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** The most bytes the provider's answer kept in `raw` may take, serialized. */
export const RAW_MAX_BYTES = 64 * 1024;
/**
 * The most bytes a connection's credentials may take, serialized: a Secret holds at most 1 MiB (base64
 * takes a third more), and an API server asked to take near that much at once reset our connection.
 */
export const CREDENTIALS_MAX_BYTES = 256 * 1024;
/** Fields of `raw` that Latchkey reads (the token's lifetime): dropped last. */
const RAW_FIELDS_USED = new Set(['expires_in', 'token_type', 'scope', 'refresh_token_expires_in']);

const jsonBytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8');

/**
 * Credentials that fit their Secret. `raw` over {@link RAW_MAX_BYTES} loses whole top-level fields,
 * the largest first and the ones Latchkey reads last, until it fits: never cut inside a value (a cut
 * JSON text or token is worse than none), and the rest of the provider's answer stays as it was. Then
 * credentials over {@link CREDENTIALS_MAX_BYTES} (a 900 KiB access token) are refused with
 * `provider_answer_too_large`: nothing is stored, and the message names no value.
 */
export function fitCredentials<T extends object>(credentials: T): T {
  const c = credentials as T & { raw?: unknown };
  let out = credentials;
  if (c.raw && typeof c.raw === 'object' && !Array.isArray(c.raw) && jsonBytes(c.raw) > RAW_MAX_BYTES) {
    const raw: Record<string, unknown> = { ...(c.raw as Record<string, unknown>) };
    const order = Object.keys(raw)
      .map((k) => ({ k, used: RAW_FIELDS_USED.has(k), size: jsonBytes({ [k]: raw[k] }) }))
      .sort((a, b) => Number(a.used) - Number(b.used) || b.size - a.size);
    let size = jsonBytes(raw);
    for (const { k, size: entry } of order) {
      if (size <= RAW_MAX_BYTES) break;
      delete raw[k];
      size -= entry;
    }
    out = { ...credentials, raw };
  }
  if (jsonBytes(out) > CREDENTIALS_MAX_BYTES) {
    throw answerTooLargeError(`The provider's credentials are larger than ${CREDENTIALS_MAX_BYTES} bytes; they were not stored.`);
  }
  return out;
}
