/**
 * What the proxy adds to a request: the provider's templated `proxy.headers`, `proxy.query` and `proxy.body`
 * (every mode; the body's fields set by json-body-fields.ts; `${apiKey}`, `${username}`, `${password}`, `${accessToken}` filled from the
 * credentials), then the credential as the connection's auth mode module places it
 * (`proxy.authorization`, src/modes: a bearer token, HTTP Basic, an OAuth 1.0a or TBA signature, or
 * nothing). A provider whose headers already carry the credential (for example
 * `x-shopify-access-token: ${accessToken}`) gets no extra Authorization.
 */
import {
  filledBody,
  filledHeaders,
  filledQuery,
  templatesUseClient,
  type CredentialValues,
  type Injection,
} from '../catalog/credential-templates.js';
import type { ProviderSpec } from '../k8s/resources.js';
import type { StoredCredentials } from '../k8s/store.js';
import type { AuthorizationInput } from '../modes/auth-mode.js';
import { accessTokenOf, moduleOfCredentials } from '../modes/registry.js';

export type { AuthorizationInput, OAuth1Consumer } from '../modes/auth-mode.js';
export { templatesUse } from '../modes/shared/injection.js';
export type { Injection } from '../catalog/credential-templates.js';

/** The Integration's client, for templates that name `${clientId}` or `${clientSecret}`. */
export type IntegrationClient = { clientId?: string; clientSecret?: string };

function credentialValues(credentials: StoredCredentials, client: IntegrationClient | undefined): CredentialValues {
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return {
    apiKey: str(credentials.apiKey),
    username: str(credentials.username),
    password: str(credentials.password),
    accessToken: accessTokenOf(credentials),
    sessionToken: str(credentials.session_token),
    ...(client?.clientId !== undefined ? { clientId: client.clientId } : {}),
    ...(client?.clientSecret !== undefined ? { clientSecret: client.clientSecret } : {}),
  };
}

/** True when the provider's templates name the Integration's client (Etsy: `x-api-key: ${clientId}:${clientSecret}`). */
export function needsIntegrationClient(spec: ProviderSpec): boolean {
  return templatesUseClient([spec.proxy?.headers, spec.proxy?.query, spec.proxy?.body]);
}

/** The templated headers and query parameters of the provider record, filled for this connection. */
export function templatedInjection(
  spec: ProviderSpec,
  credentials: StoredCredentials,
  connectionConfig: Record<string, unknown> | undefined,
  client?: IntegrationClient,
): Injection {
  const values = credentialValues(credentials, client);
  const headers = filledHeaders(spec.proxy?.headers, values, connectionConfig);
  // Headers of the mode's own (BILL: the session and developer key), under the templated ones.
  const own = moduleOfCredentials(credentials)?.proxy.defaultHeaders?.(credentials) ?? {};
  for (const [name, value] of Object.entries(own)) headers[name] ??= value;
  const query = filledQuery(spec.proxy?.query, values, connectionConfig);
  const body = spec.proxy?.body;
  return body ? { headers, query, body: filledBody(body, values, connectionConfig) } : { headers, query };
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

  of(
    spec: ProviderSpec,
    credentials: StoredCredentials,
    connectionConfig: Record<string, unknown> | undefined,
    client?: () => IntegrationClient | undefined,
  ): Injection {
    // The Integration's client changes without the connection's objects changing (a rotated secret): never kept.
    if (needsIntegrationClient(spec)) return templatedInjection(spec, credentials, connectionConfig, client?.());
    const configKey = connectionConfig ?? NO_CONFIG;
    let byCredentials = this.kept.get(spec);
    let byConfig = byCredentials?.get(credentials);
    const known = byConfig?.get(configKey);
    if (known) return known;
    const injection = templatedInjection(spec, credentials, connectionConfig);
    Object.freeze(injection.headers);
    for (const pair of injection.query) Object.freeze(pair);
    Object.freeze(injection.query);
    if (injection.body) {
      for (const pair of injection.body) Object.freeze(pair);
      Object.freeze(injection.body);
    }
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
