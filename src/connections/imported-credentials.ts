/**
 * Credentials an application imports, as stored: the deprecated flat `POST /connection` body read
 * by the provider's auth mode, and a JWT signing key turned into a minted token. Refusals are 400s
 * naming the fields, before anything is stored.
 */
import { JwtMintError, mintJwtCredentials } from '../auth/jwt-minting.js';
import { LatchkeyError } from '../domain/errors.js';
import type { ProviderResource } from '../k8s/resources.js';
import type { StoredCredentials } from '../k8s/store.js';

/** The credential fields of the deprecated flat import body (already validated for shape). */
export interface DeprecatedCredentialFields {
  access_token?: string;
  refresh_token?: string;
  /** ISO 8601 (or anything `new Date` reads; the schema checked it). */
  expires_at?: string;
  expires_in?: number;
  no_expiration?: boolean;
  oauth_client_id_override?: string;
  oauth_client_secret_override?: string;
  oauth_token?: string;
  oauth_token_secret?: string;
  username?: string;
  password?: string;
  api_key?: string;
  token_id?: string;
  token_secret?: string;
}

type Field = keyof DeprecatedCredentialFields;
const CREDENTIAL_FIELDS: Field[] = [
  'access_token',
  'refresh_token',
  'expires_at',
  'expires_in',
  'no_expiration',
  'oauth_client_id_override',
  'oauth_client_secret_override',
  'oauth_token',
  'oauth_token_secret',
  'username',
  'password',
  'api_key',
  'token_id',
  'token_secret',
];

/** The deprecated flat import body as stored credentials of the provider's auth mode. */
export function credentialsFromDeprecated(
  body: DeprecatedCredentialFields,
  authMode: string,
  provider: string,
  now: number,
): StoredCredentials {
  const require = (keys: Field[]) => {
    const m = keys.filter((k) => body[k] === undefined);
    if (m.length) {
      throw new LatchkeyError('invalid_input', 'missing_credentials', `Provider "${provider}" uses ${authMode}: ${m.join(', ')} required`, {
        errors: m.map((k) => ({ path: `body.${k}`, message: 'required', code: 'missing_credentials' })),
      });
    }
  };
  const only = (allowed: Field[]) => {
    const wrong = CREDENTIAL_FIELDS.filter((k) => !allowed.includes(k) && body[k] !== undefined);
    if (wrong.length) {
      throw new LatchkeyError(
        'invalid_input',
        'credentials_type_mismatch',
        `Provider "${provider}" uses ${authMode}; these fields do not apply: ${wrong.join(', ')}`,
        { errors: wrong.map((k) => ({ path: `body.${k}`, message: `not used by ${authMode}`, code: 'credentials_type_mismatch' })) },
      );
    }
  };
  switch (authMode) {
    case 'OAUTH2': {
      only([
        'access_token',
        'refresh_token',
        'expires_at',
        'expires_in',
        'no_expiration',
        'oauth_client_id_override',
        'oauth_client_secret_override',
      ]);
      require(['access_token']);
      const expiresAt =
        body.expires_at !== undefined
          ? isoTimestamp(new Date(body.expires_at), 'expires_at')
          : body.expires_in !== undefined
            ? isoTimestamp(new Date(now + body.expires_in * 1000), 'expires_in')
            : undefined;
      if (!expiresAt && !body.no_expiration) {
        throw new LatchkeyError(
          'invalid_input',
          'missing_expiration',
          "OAuth 2 import needs expires_at (preferred) or expires_in, or no_expiration: true when the provider's tokens never expire",
          {
            errors: [
              { path: 'body.expires_at', message: 'required unless expires_in or no_expiration is given', code: 'missing_expiration' },
            ],
          },
        );
      }
      const override = { client_id: body.oauth_client_id_override, client_secret: body.oauth_client_secret_override };
      const raw: Record<string, unknown> = { access_token: body.access_token };
      if (body.refresh_token) raw.refresh_token = body.refresh_token;
      if (body.expires_in !== undefined) raw.expires_in = body.expires_in;
      return {
        type: 'OAUTH2',
        access_token: body.access_token!,
        ...(body.refresh_token ? { refresh_token: body.refresh_token } : {}),
        ...(expiresAt ? { expires_at: expiresAt } : {}),
        raw,
        ...(override.client_id || override.client_secret ? { config_override: JSON.parse(JSON.stringify(override)) as object } : {}),
      };
    }
    case 'OAUTH1':
      only(['oauth_token', 'oauth_token_secret']);
      require(['oauth_token', 'oauth_token_secret']);
      return {
        type: 'OAUTH1',
        oauth_token: body.oauth_token!,
        oauth_token_secret: body.oauth_token_secret!,
        raw: { oauth_token: body.oauth_token, oauth_token_secret: body.oauth_token_secret },
      };
    case 'BASIC':
      only(['username', 'password']);
      require(['username', 'password']);
      return { type: 'BASIC', username: body.username!, password: body.password! };
    case 'API_KEY':
      only(['api_key']);
      require(['api_key']);
      return { type: 'API_KEY', apiKey: body.api_key! };
    case 'NONE':
      only([]);
      return { type: 'NONE' };
    // TWO_STEP: the flat username and password fit providers that exchange exactly those (the exchange checks which fields).
    case 'TWO_STEP':
      only(['username', 'password']);
      return JSON.parse(JSON.stringify({ type: 'TWO_STEP', username: body.username, password: body.password })) as StoredCredentials;
    case 'BILL':
    case 'APP_STORE':
      throw new LatchkeyError(
        'invalid_input',
        'unsupported_auth_mode',
        `Provider "${provider}" uses ${authMode}, whose credentials have no flat fields; import them with POST /connections`,
      );
    case 'TBA': {
      // The consumer key and secret are the Integration's unless overridden, as for OAuth 2.
      only(['token_id', 'token_secret', 'oauth_client_id_override', 'oauth_client_secret_override']);
      require(['token_id', 'token_secret']);
      const override = { client_id: body.oauth_client_id_override, client_secret: body.oauth_client_secret_override };
      return {
        type: 'TBA',
        token_id: body.token_id!,
        token_secret: body.token_secret!,
        ...(override.client_id || override.client_secret ? { config_override: JSON.parse(JSON.stringify(override)) as object } : {}),
      };
    }
    // INSTALL_PLUGIN: the credential the installation issued, as an API key is imported.
    case 'INSTALL_PLUGIN':
      only(['api_key']);
      require(['api_key']);
      return { type: 'INSTALL_PLUGIN', apiKey: body.api_key! } as StoredCredentials;
    case 'SIGNATURE':
      only(['username', 'password']);
      require(['username', 'password']);
      return { type: 'SIGNATURE', username: body.username!, password: body.password! };
    default:
      throw new LatchkeyError(
        'invalid_input',
        'unsupported_auth_mode',
        `Provider "${provider}" uses ${authMode}, which cannot be imported; connect it through a connect session instead`,
      );
  }
}

/** JWT import: a token is minted from the key at once, so a key that cannot sign is refused before anything is stored. */
export function jwtFromImport(
  provider: ProviderResource,
  apiKey: string,
  connectionConfig: Record<string, unknown>,
  now: number,
): StoredCredentials {
  try {
    return mintJwtCredentials({
      modeOptions: provider.spec.modeOptions,
      apiKey,
      connectionConfig,
      now,
      provider: `provider "${provider.metadata.name}"`,
    });
  } catch (err) {
    if (!(err instanceof JwtMintError)) throw err;
    if (err.problem === 'invalid_key') {
      throw new LatchkeyError(
        'invalid_input',
        'invalid_credentials',
        `credentials.apiKey cannot sign ${provider.metadata.name} tokens: ${err.message}`,
        { errors: [{ path: 'body.credentials.apiKey', message: err.message, code: 'invalid_credentials' }] },
      );
    }
    if (err.problem === 'missing_connection_config') {
      throw new LatchkeyError('invalid_input', 'missing_connection_config', `${err.message}; pass it in connection_config`, {
        errors: err.keys.map((k) => ({ path: `body.connection_config.${k}`, message: 'required', code: 'missing_connection_config' })),
      });
    }
    throw new LatchkeyError('unavailable', 'integration_misconfigured', err.message);
  }
}

/** A date as ISO 8601, or a 400 naming the field when it is out of Date's range (toISOString would throw). */
function isoTimestamp(date: Date, field: 'expires_at' | 'expires_in'): string {
  if (Number.isNaN(date.getTime())) {
    throw new LatchkeyError('invalid_input', 'invalid_expiration', `${field} is out of range`, {
      errors: [{ path: `body.${field}`, message: 'out of range', code: 'invalid_expiration' }],
    });
  }
  return date.toISOString();
}
