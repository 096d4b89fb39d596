/**
 * The deprecated flat `POST /connection` body, read field by field by each mode (./<mode>.ts):
 * which fields a mode takes and requires, refused with 400s naming the fields before anything is
 * stored; and the refusal of modes that cannot be imported at all.
 */
import { LatchkeyError } from '../../domain/errors.js';
import type { FlatCredentialFields, FlatImportInput } from '../auth-mode.js';

type Field = keyof FlatCredentialFields;
/** An OAuth 2 token's fields and its client override: the body's first group (what OAUTH2 takes). */
export const TOKEN_FIELDS: readonly Field[] = [
  'access_token',
  'refresh_token',
  'expires_at',
  'expires_in',
  'no_expiration',
  'oauth_client_id_override',
  'oauth_client_secret_override',
];
const CREDENTIAL_FIELDS: readonly Field[] = [
  ...TOKEN_FIELDS,
  'oauth_token',
  'oauth_token_secret',
  'username',
  'password',
  'api_key',
  'token_id',
  'token_secret',
];

/** The flat fields for this mode: only `allowed` may be set, `required` must be. */
export function flatFields(input: FlatImportInput, allowed: readonly Field[], required: readonly Field[] = []): FlatCredentialFields {
  const { fields: body } = input;
  const mode = input.provider.spec.authMode;
  const provider = input.provider.metadata.name;
  const wrong = CREDENTIAL_FIELDS.filter((k) => !allowed.includes(k) && body[k] !== undefined);
  if (wrong.length) {
    throw new LatchkeyError(
      'invalid_input',
      'credentials_type_mismatch',
      `Provider "${provider}" uses ${mode}; these fields do not apply: ${wrong.join(', ')}`,
      { errors: wrong.map((k) => ({ path: `body.${k}`, message: `not used by ${mode}`, code: 'credentials_type_mismatch' })) },
    );
  }
  const missing = required.filter((k) => body[k] === undefined);
  if (missing.length) {
    throw new LatchkeyError('invalid_input', 'missing_credentials', `Provider "${provider}" uses ${mode}: ${missing.join(', ')} required`, {
      errors: missing.map((k) => ({ path: `body.${k}`, message: 'required', code: 'missing_credentials' })),
    });
  }
  return body;
}

/** The connection's OAuth client override (`config_override`), when the body sets one. */
export function clientOverride(body: FlatCredentialFields): { config_override?: object } {
  const override = { client_id: body.oauth_client_id_override, client_secret: body.oauth_client_secret_override };
  return override.client_id || override.client_secret ? { config_override: JSON.parse(JSON.stringify(override)) as object } : {};
}

/** Modes whose connections only an end-user flow makes (CUSTOM; APP, JWT and OAUTH2_CC on the flat body). */
export function notFlatImportable(input: Pick<FlatImportInput, 'provider'>): never {
  throw new LatchkeyError(
    'invalid_input',
    'unsupported_auth_mode',
    `Provider "${input.provider.metadata.name}" uses ${input.provider.spec.authMode}, which cannot be imported; connect it through a connect session instead`,
  );
}

/** Modes whose credentials have no flat fields (BILL, APP_STORE). */
export function noFlatFields(input: FlatImportInput): never {
  throw new LatchkeyError(
    'invalid_input',
    'unsupported_auth_mode',
    `Provider "${input.provider.metadata.name}" uses ${input.provider.spec.authMode}, whose credentials have no flat fields; import them with POST /connections`,
  );
}

/** A date as ISO 8601, or a 400 naming the field when it is out of Date's range (toISOString would throw). */
export function isoTimestamp(date: Date, field: 'expires_at' | 'expires_in'): string {
  if (Number.isNaN(date.getTime())) {
    throw new LatchkeyError('invalid_input', 'invalid_expiration', `${field} is out of range`, {
      errors: [{ path: `body.${field}`, message: 'out of range', code: 'invalid_expiration' }],
    });
  }
  return date.toISOString();
}

/** Drops undefined values (stored credentials carry no empty keys). */
export function compact<T extends Record<string, unknown>>(o: T): T & { type: string } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T & { type: string };
}

/** An ISO 8601 timestamp of a schema-checked date, or undefined. */
export function isoOrUndefined(v: unknown): string | undefined {
  return typeof v === 'string' ? new Date(v).toISOString() : undefined;
}
