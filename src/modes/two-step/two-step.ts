/**
 * Auth mode TWO_STEP: the end user's stored credentials (a user name and password, a personal access
 * token's name and secret, an API client ID and secret) are exchanged at the provider's token endpoint
 * for a short-lived token, and exchanged again before it expires. The Provider's `spec.twoStep`
 * describes the exchange:
 *
 * - `credentialFields`: the fields the end user gives (import, Connect UI form), stored as they are;
 * - `tokenUrl`: where to POST, with `${connectionConfig.KEY}` placeholders (checked against the
 *   provider's declared hosts like every templated URL);
 * - `contentType` (`json` or `form`), `headers`, and `body`: the request body as an object whose
 *   string values may use `${credentials.FIELD}` and `${connectionConfig.KEY}` (filled, then encoded
 *   as JSON or form, so no value can change the body's structure);
 * - `tokenPath`, `expiresInPath`, `expiresAtPath`: where the token and its expiry sit in the JSON
 *   answer (a JSON pointer `/a/b` or a dotted path `a.b`);
 * - `defaultLifetimeSeconds`: the token's lifetime when the answer says nothing (the provider's documented one).
 */
import { z } from 'zod';
import { configFields, fillProviderUrl } from '../../catalog/connection-config.js';
import { LatchkeyError } from '../../domain/errors.js';
import type { ProviderSpec } from '../../k8s/resources.js';
import type { StoredCredentials } from '../../k8s/store.js';
import { CredentialExchangeError, postForJson, renewByExchange, type ExchangeCall } from '../shared/credential-exchange.js';
import type { RefreshStrategy } from '../../auth/refresh/strategies.js';

/** Names the stored credentials use themselves: a credential field may not take them. */
export const TWO_STEP_RESERVED_FIELDS = ['type', 'token', 'expires_at', 'raw'];

const FieldName = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/)
  .refine((n) => !TWO_STEP_RESERVED_FIELDS.includes(n), 'reserved name');

export const TwoStepOptions = z.object({
  tokenUrl: z.string().min(1).max(2048),
  contentType: z.enum(['json', 'form']).default('json'),
  headers: z.record(z.string(), z.string().max(1024)).default({}),
  body: z.record(z.string(), z.unknown()).default({}),
  credentialFields: z
    .array(
      z.object({
        name: FieldName,
        label: z.string().max(256).optional(),
        secret: z.boolean().default(true),
        required: z.boolean().default(true),
      }),
    )
    .min(1)
    .max(8),
  tokenPath: z.string().min(1).max(256),
  expiresInPath: z.string().min(1).max(256).optional(),
  expiresAtPath: z.string().min(1).max(256).optional(),
  defaultLifetimeSeconds: z
    .number()
    .int()
    .min(60)
    .max(366 * 86_400)
    .optional(),
});
export type TwoStepOptions = z.infer<typeof TwoStepOptions>;

/** The Provider's `spec.twoStep`, checked; a `misconfigured` exchange error when it is not usable. */
export function twoStepOptions(spec: ProviderSpec): TwoStepOptions {
  const parsed = TwoStepOptions.safeParse(spec.twoStep ?? undefined);
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0];
  const where = first ? `twoStep.${first.path.map(String).join('.')}: ${first.message}` : 'twoStep';
  throw new CredentialExchangeError('misconfigured', `the provider's token exchange is not usable (${where})`);
}

// ---- templates and paths ----

const PLACEHOLDER = /\$\{(credentials|connectionConfig)\.([A-Za-z0-9_]+)\}/g;

/** Fills every string of the body template; collects the placeholders without a value. */
function fillBody(
  value: unknown,
  values: { credentials: Record<string, unknown>; connectionConfig: Record<string, unknown> },
  missing: Set<string>,
): unknown {
  if (typeof value === 'string') {
    return value.replace(PLACEHOLDER, (m, where: 'credentials' | 'connectionConfig', key: string) => {
      const v = values[where][key];
      // An empty configuration value is a value (Tableau's default site is ""); credential fields were checked before.
      if (typeof v === 'string') return v;
      if (typeof v === 'number' && Number.isFinite(v)) return String(v);
      missing.add(`${where}.${key}`);
      return m;
    });
  }
  if (Array.isArray(value)) return value.map((v) => fillBody(v, values, missing));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillBody(v, values, missing)]));
  }
  return value;
}

/** The value at a JSON pointer (`/credentials/token`) or a dotted path (`credentials.token`). */
export function valueAtPath(json: unknown, path: string): unknown {
  const parts = path.startsWith('/')
    ? path
        .slice(1)
        .split('/')
        .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    : path.split('.');
  let cur: unknown = json;
  for (const p of parts) {
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, p)) return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

/** An expiry from the answer: seconds from now, or an absolute time (ISO 8601 or epoch seconds/milliseconds). */
function expiryOf(answer: Record<string, unknown>, options: TwoStepOptions, now: number): string | undefined {
  if (options.expiresInPath) {
    const v = valueAtPath(answer, options.expiresInPath);
    const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
    if (Number.isFinite(n) && n > 0) return new Date(now + n * 1000).toISOString();
  }
  if (options.expiresAtPath) {
    const v = valueAtPath(answer, options.expiresAtPath);
    const t = typeof v === 'number' ? (v < 1e12 ? v * 1000 : v) : typeof v === 'string' ? Date.parse(v) : NaN;
    if (Number.isFinite(t) && t > now) return new Date(t).toISOString();
  }
  return options.defaultLifetimeSeconds ? new Date(now + options.defaultLifetimeSeconds * 1000).toISOString() : undefined;
}

// ---- the exchange ----

/**
 * The configuration with the Provider's defaults for the keys left out or empty: an import's
 * configuration reaches the exchange before it is checked and stored (Tableau's default site is "").
 */
function withConfigDefaults(spec: ProviderSpec, config: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(config ?? {}) };
  for (const f of configFields(spec)) {
    const v = out[f.name];
    if ((v === undefined || v === null || v === '') && f.default !== undefined) out[f.name] = f.default;
  }
  return out;
}

export interface TwoStepExchangeInput extends ExchangeCall {
  /** The end user's fields (what `credentialFields` names). */
  fields: Record<string, string>;
}

/**
 * Exchanges the fields for a token; returns the credentials to store (the fields, `token`,
 * `expires_at` when known, and the answer as `raw`). Throws {@link CredentialExchangeError}, or a
 * 400 when the configuration is missing or points the token URL off the provider's hosts.
 */
export async function exchangeTwoStep(input: TwoStepExchangeInput): Promise<StoredCredentials> {
  const spec = input.provider.spec;
  const options = twoStepOptions(spec);
  const config = withConfigDefaults(spec, input.connectionConfig);
  const url = fillProviderUrl(spec, options.tokenUrl, config);
  const missing = new Set<string>();
  const values = { credentials: input.fields, connectionConfig: config };
  const body = fillBody(options.body, values, missing) as Record<string, unknown>;
  const headers = fillBody(options.headers, values, missing) as Record<string, string>;
  if (missing.size) {
    const keys = [...missing];
    throw new LatchkeyError('invalid_input', 'missing_connection_config', `The token exchange needs ${keys.join(', ')}`, {
      errors: keys.map((k) => ({
        path: k.startsWith('credentials.') ? `body.${k}` : `body.connection_config.${k.split('.')[1]}`,
        message: 'required',
      })),
    });
  }
  const encoded =
    options.contentType === 'json'
      ? JSON.stringify(body)
      : new URLSearchParams(
          Object.entries(body).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
        ).toString();
  const answer = await postForJson({
    url,
    headers: {
      ...Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
      'content-type': options.contentType === 'json' ? 'application/json' : 'application/x-www-form-urlencoded',
    },
    body: encoded,
    fetch: input.fetch,
    timeoutSeconds: input.timeoutSeconds,
    now: input.now,
    what: `${spec.displayName}'s token endpoint`,
  });
  const token = valueAtPath(answer, options.tokenPath);
  if (typeof token !== 'string' || token.length === 0) {
    throw new CredentialExchangeError(
      'misconfigured',
      `${spec.displayName}'s token endpoint answered without a token at ${options.tokenPath}`,
    );
  }
  const expiresAt = expiryOf(answer, options, input.now);
  return {
    ...input.fields,
    type: 'TWO_STEP',
    token,
    ...(expiresAt ? { expires_at: expiresAt } : {}),
    raw: answer,
  };
}

/** The end user's fields among stored TWO_STEP credentials (everything the provider's credentialFields name). */
export function twoStepFields(spec: ProviderSpec, credentials: Record<string, unknown>): Record<string, string> {
  const options = twoStepOptions(spec);
  const out: Record<string, string> = {};
  for (const f of options.credentialFields) {
    const v = credentials[f.name];
    if (typeof v === 'string') out[f.name] = v;
  }
  return out;
}

/**
 * The fields an import or a form gives, checked against the provider's `credentialFields`: unknown
 * ones and missing required ones are a 400 naming them (`pathPrefix` says where they were sent).
 */
export function checkTwoStepFields(spec: ProviderSpec, given: Record<string, unknown>, pathPrefix: string): Record<string, string> {
  let options: TwoStepOptions;
  try {
    options = twoStepOptions(spec);
  } catch (err) {
    throw new LatchkeyError('unavailable', 'integration_misconfigured', (err as Error).message);
  }
  const known = new Set(options.credentialFields.map((f) => f.name));
  const unknown = Object.keys(given).filter((k) => k !== 'type' && !known.has(k));
  const missingFields = options.credentialFields.filter((f) => f.required && !(typeof given[f.name] === 'string' && given[f.name] !== ''));
  const errors = [
    ...unknown.map((k) => ({
      path: `${pathPrefix}.${k}`,
      message: `not a credential field of ${spec.displayName}`,
      code: 'unknown_field',
    })),
    ...missingFields.map((f) => ({ path: `${pathPrefix}.${f.name}`, message: 'required', code: 'missing_credentials' })),
  ];
  if (errors.length) {
    throw new LatchkeyError(
      'invalid_input',
      unknown.length ? 'credentials_type_mismatch' : 'missing_credentials',
      `${spec.displayName} takes the credential fields ${[...known].join(', ')}: ${errors.map((e) => `${e.path.split('.').pop()} ${e.message}`).join('; ')}`,
      { errors },
    );
  }
  const out: Record<string, string> = {};
  for (const k of known) if (typeof given[k] === 'string') out[k] = given[k];
  return out;
}

/** TWO_STEP: the stored fields exchanged again. */
export const twoStepStrategy: RefreshStrategy = {
  canRefresh: () => true,
  refresh: (input) =>
    renewByExchange(input, (call) =>
      exchangeTwoStep({ ...call, fields: twoStepFields(input.provider.spec, input.connection.credentials) }),
    ),
};
