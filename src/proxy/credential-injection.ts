/**
 * What the proxy adds to a request: the provider's templated `proxy.headers` and `proxy.query`
 * (every mode; `${apiKey}`, `${username}`, `${password}`, `${accessToken}` filled from the
 * credentials), then the credential as the connection's auth mode module places it
 * (`proxy.authorization`, src/modes: a bearer token, HTTP Basic, an OAuth 1.0a or TBA signature, or
 * nothing). A provider whose headers already carry the credential (for example
 * `x-shopify-access-token: ${accessToken}`) gets no extra Authorization.
 */
import { fillTemplate, MissingTemplateValueError } from '../catalog/template.js';
import type { ProviderSpec } from '../k8s/resources.js';
import type { StoredCredentials } from '../k8s/store.js';
import { LatchkeyError } from '../domain/errors.js';
import type { AuthorizationInput } from '../modes/auth-mode.js';
import { accessTokenOf, moduleOfCredentials } from '../modes/registry.js';
import { isUnsafeHeaderValue } from './headers.js';

export type { AuthorizationInput, OAuth1Consumer } from '../modes/auth-mode.js';
export { templatesUse } from '../modes/injection.js';

const VALUE_PLACEHOLDER = /\$\{(apiKey|username|password|accessToken)\}/g;

export interface Injection {
  headers: Record<string, string>;
  query: Array<[string, string]>;
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
  // Headers of the mode's own (BILL: the session and developer key), under the templated ones.
  const own = moduleOfCredentials(credentials)?.proxy.defaultHeaders?.(credentials) ?? {};
  for (const [name, value] of Object.entries(own)) headers[name] ??= value;
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

/** The Authorization header the connection's auth mode needs, or undefined when it needs none (or the templates set one). */
export function authorizationHeader(input: AuthorizationInput): string | undefined {
  if (input.headers.authorization !== undefined) return undefined;
  return moduleOfCredentials(input.credentials)?.proxy.authorization(input);
}
