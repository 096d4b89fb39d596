/**
 * What the proxy adds to a request for each auth mode: the provider's templated `proxy.headers`
 * and `proxy.query` (every mode), then the mode's own credential — a bearer token (OAUTH2,
 * OAUTH2_CC, APP, and JWT's minted token), HTTP Basic (BASIC), an OAuth 1.0a HMAC-SHA1 signature (OAUTH1), or
 * NetSuite's HMAC-SHA256 one with the account realm (TBA). An API key goes only where the provider record puts it; a
 * SIGNATURE mode's per-request value is `${accessToken}` (computed by the caller, see auth/request-signature.ts). NONE adds nothing. A provider whose headers already carry the
 * credential (for example `x-shopify-access-token: ${accessToken}`) gets no extra Authorization.
 */
import { fillTemplate, MissingTemplateValueError } from '../catalog/template.js';
import { signRequest } from '../auth/oauth1.js';
import { billProxyHeaders } from '../auth/bill-session.js';
import { tbaAuthorization } from '../auth/tba-signing.js';
import type { ProviderSpec } from '../k8s/resources.js';
import type { StoredCredentials } from '../k8s/store.js';
import { LatchkeyError } from '../domain/errors.js';
import { isUnsafeHeaderValue } from './headers.js';

const VALUE_PLACEHOLDER = /\$\{(apiKey|username|password|accessToken)\}/g;

export interface Injection {
  headers: Record<string, string>;
  query: Array<[string, string]>;
}

/** The access token of bearer-token modes (for JWT the minted token, for SIGNATURE the computed value), or undefined for other credential types. */
export function accessTokenOf(credentials: StoredCredentials): string | undefined {
  const v =
    credentials.type === 'OAUTH2_CC' || credentials.type === 'JWT' || credentials.type === 'TWO_STEP' || credentials.type === 'SIGNATURE'
      ? credentials.token
      : credentials.access_token;
  return typeof v === 'string' && v ? v : undefined;
}

function credentialValues(credentials: StoredCredentials): Record<string, string | undefined> {
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return {
    apiKey: str(credentials.apiKey),
    username: str(credentials.username),
    password: str(credentials.password),
    accessToken: accessTokenOf(credentials),
  };
}

function fill(
  template: string,
  where: string,
  credentials: StoredCredentials,
  connectionConfig: Record<string, unknown> | undefined,
): string {
  let withConfig: string;
  try {
    withConfig = fillTemplate(template, connectionConfig, { encode: false });
  } catch (err) {
    if (err instanceof MissingTemplateValueError) {
      throw new LatchkeyError(
        'invalid_input',
        'missing_connection_config',
        `The provider's ${where} needs ${err.message.replace(/^connection configuration is missing /, 'connection configuration ')}`,
      );
    }
    throw err;
  }
  const values = credentialValues(credentials);
  return withConfig.replace(VALUE_PLACEHOLDER, (_m, name: string) => {
    const v = values[name];
    if (v === undefined)
      throw new LatchkeyError(
        'invalid_input',
        'missing_credentials',
        `The provider's ${where} needs the connection's ${name}, which its credentials do not have`,
      );
    return v;
  });
}

/** The templated headers and query parameters of the provider record, filled for this connection. */
export function templatedInjection(
  spec: ProviderSpec,
  credentials: StoredCredentials,
  connectionConfig: Record<string, unknown> | undefined,
): Injection {
  const headers: Record<string, string> = {};
  for (const [name, template] of Object.entries(spec.proxy?.headers ?? {})) {
    const value = fill(template, `proxy header ${name}`, credentials, connectionConfig);
    if (isUnsafeHeaderValue(value))
      throw new LatchkeyError('invalid_input', 'invalid_header_value', `The proxy header ${name} would contain control characters`);
    headers[name.toLowerCase()] = value;
  }
  // BILL: the session and developer key go in headers of their own on every call.
  for (const [name, value] of Object.entries(billProxyHeaders(credentials))) headers[name] ??= value;
  const query: Array<[string, string]> = Object.entries(spec.proxy?.query ?? {}).map(([name, template]) => [
    name,
    fill(template, `proxy query parameter ${name}`, credentials, connectionConfig),
  ]);
  return { headers, query };
}

/**
 * templatedInjection's results kept per Provider spec, credentials and connection configuration
 * objects (it is a pure function of them). The informer cache and the store replace these objects
 * when they change and never edit them, so a new version is a miss; a SIGNATURE's fresh value is a
 * new credentials object every time. Failures are not kept (thrown again each time). The results
 * are frozen: they are shared between requests.
 */
export class Injections {
  private readonly kept = new WeakMap<ProviderSpec, WeakMap<StoredCredentials, WeakMap<object, Injection>>>();

  of(spec: ProviderSpec, credentials: StoredCredentials, connectionConfig: Record<string, unknown> | undefined): Injection {
    const configKey = connectionConfig ?? NO_CONFIG;
    let byCredentials = this.kept.get(spec);
    let byConfig = byCredentials?.get(credentials);
    const known = byConfig?.get(configKey);
    if (known) return known;
    const injection = templatedInjection(spec, credentials, connectionConfig);
    Object.freeze(injection.headers);
    for (const pair of injection.query) Object.freeze(pair);
    Object.freeze(injection.query);
    Object.freeze(injection);
    if (!byCredentials) this.kept.set(spec, (byCredentials = new WeakMap()));
    if (!byConfig) byCredentials.set(credentials, (byConfig = new WeakMap()));
    byConfig.set(configKey, injection);
    return injection;
  }
}

const NO_CONFIG = {};

/** True when the provider's templates already place this credential somewhere. */
export function templatesUse(spec: ProviderSpec, placeholder: string): boolean {
  return [...Object.values(spec.proxy?.headers ?? {}), ...Object.values(spec.proxy?.query ?? {})].some((v) => v.includes(placeholder));
}

export interface OAuth1Consumer {
  consumerKey: string;
  consumerSecret: string;
}

export interface AuthorizationInput {
  spec: ProviderSpec;
  credentials: StoredCredentials;
  /** Headers already decided (templated ones); an `authorization` among them wins. */
  headers: Record<string, string>;
  method: string;
  /** The target URL, made only when a signature covers it (OAuth 1, TBA). */
  url: () => URL;
  /** Parameters of a form-encoded body (OAuth 1 signs them). */
  formParams?: URLSearchParams;
  /** The integration's consumer key and secret (OAUTH1, TBA), a connection's override first. */
  oauth1Consumer?: (override?: { client_id?: string; client_secret?: string }) => OAuth1Consumer | undefined;
  /** The connection's configuration (TBA's realm is its account ID). */
  connectionConfig?: Record<string, unknown>;
}

/** The Authorization header the auth mode needs, or undefined when it needs none (or the templates set one). */
export function authorizationHeader(input: AuthorizationInput): string | undefined {
  const { spec, credentials } = input;
  if (input.headers.authorization !== undefined) return undefined;
  switch (credentials.type) {
    case 'OAUTH2':
    case 'OAUTH2_CC':
    case 'APP':
    case 'CUSTOM': // the installation token (the user's token is for the application's own calls)
    case 'JWT':
    case 'TWO_STEP':
    case 'APP_STORE': {
      if (templatesUse(spec, '${accessToken}')) return undefined;
      const token = accessTokenOf(credentials);
      if (!token) throw new LatchkeyError('invalid_input', 'missing_credentials', 'The connection has no access token');
      if (isUnsafeHeaderValue(token))
        throw new LatchkeyError('invalid_input', 'invalid_credentials', 'The access token contains control characters');
      return `Bearer ${token}`;
    }
    case 'BASIC': {
      if (templatesUse(spec, '${username}') || templatesUse(spec, '${password}')) return undefined;
      const { username, password } = credentialValues(credentials);
      if (username === undefined) throw new LatchkeyError('invalid_input', 'missing_credentials', 'The connection has no username');
      return `Basic ${Buffer.from(`${username}:${password ?? ''}`, 'utf8').toString('base64')}`;
    }
    case 'OAUTH1': {
      const consumer = input.oauth1Consumer?.();
      if (!consumer)
        throw new LatchkeyError(
          'invalid_input',
          'missing_client_credentials',
          'The integration has no consumer key and secret (clientSecretRef) to sign OAuth 1.0a requests',
        );
      const token = credentials.oauth_token;
      const tokenSecret = credentials.oauth_token_secret;
      if (typeof token !== 'string' || typeof tokenSecret !== 'string')
        throw new LatchkeyError('invalid_input', 'missing_credentials', 'The connection has no OAuth 1.0a token');
      return signRequest({
        method: input.method,
        url: input.url().toString(),
        consumerKey: consumer.consumerKey,
        consumerSecret: consumer.consumerSecret,
        token,
        tokenSecret,
        bodyParams: input.formParams,
      });
    }
    case 'TBA':
      return tbaAuthorization({
        settings: spec.tba,
        credentials,
        connectionConfig: input.connectionConfig,
        consumer: input.oauth1Consumer?.(credentials.config_override as { client_id?: string; client_secret?: string } | undefined),
        method: input.method,
        url: input.url(),
        formParams: input.formParams,
      });
    default:
      // API_KEY (placed by the templates), NONE, SIGNATURE (its own header), and modes whose credential the templates carry.
      return undefined;
  }
}
