import { configFieldNames } from '../catalog/connection-config.js';
import { providerLogoUrl } from '../catalog/provider-logos.js';
import { shownModeOptions } from '../modes/registry.js';
import type { PostConnectionSpec, ProviderResource, ProviderSpec } from '../k8s/resources.js';

/** The spec's Provider record (snake_case), plus Latchkey's extra catalog fields in snake_case. */
export interface ProviderView {
  name: string;
  /** Other names this provider answers to (`GET /providers/{alias}`, an Integration's provider). */
  aliases?: string[];
  display_name: string;
  categories: string[];
  auth_mode: string;
  authorization_url?: string;
  token_url?: string;
  refresh_url?: string;
  request_token_url?: string;
  connection_configuration: string[];
  post_connection_script?: string;
  webhook_routing_script?: string;
  /** How Latchkey verifies and routes this provider's webhooks (the Provider's `webhooks` block as declared; docs/provider-webhooks.md). */
  webhooks?: Record<string, unknown>;
  token_response?: Record<string, unknown>;
  post_connection?: Record<string, unknown>;
  proxy?: {
    base_url?: string;
    decompress?: boolean;
    headers?: Record<string, string>;
    query?: Record<string, string>;
    body?: Record<string, string>;
    paginate?: {
      type?: string;
      cursor_path_in_response?: string;
      limit_name_in_request?: string;
      cursor_name_in_request?: string;
      response_path?: string;
    };
  };
  docs?: string;
  default_scopes?: string[];
  scope_separator?: string;
  authorization_params?: Record<string, string>;
  app_name_param?: string;
  authorization_omits?: Array<'client_id' | 'response_type'>;
  required_authorization_params?: string[];
  callback_code_param?: string;
  redirect_uri_is_name?: boolean;
  token_params?: Record<string, string>;
  token_request_auth_method?: 'basic' | 'body' | 'private_key_jwt' | 'tls_client_auth' | 'none';
  /** The provider requires the Integration's TLS client certificate on token requests (and, `api_calls`, on API calls). */
  client_certificate?: { api_calls: boolean };
  disable_pkce?: boolean;
  field_labels?: Record<string, string>;
  field_help?: Record<
    string,
    { description?: string; example?: string; docs_url?: string; labels?: Record<string, string>; descriptions?: Record<string, string> }
  >;
  /** The generic `modeOptions`, as declared (JWT's options block). */
  mode_options?: Record<string, unknown>;
  logo_url?: string;
  verification?: { docs?: string; method: string; path: string; headers?: Record<string, string> };
  revocation?: {
    docs?: string;
    url: string;
    method: string;
    token?: 'refresh_token' | 'access_token';
    token_in: 'form' | 'json' | 'bearer';
    token_field?: string;
    client_auth?: 'basic' | 'body' | 'none';
  };
  /** The mode's own options block (`two_step`, `tba`, …), as its module shows it (src/modes/<mode>/options.ts). */
  [modeOptions: string]: unknown;
}

/**
 * A Provider custom resource as the REST API shows it. Absent optional fields are left out.
 * `logo_url` is the Provider's own, else the shipped logo Latchkey serves under `publicBaseUrl`.
 */
export function providerView(p: ProviderResource, publicBaseUrl: string): ProviderView {
  const s = p.spec;
  const paginate = s.proxy?.paginate;
  return compact({
    name: p.metadata.name,
    aliases: s.aliases?.length ? s.aliases : undefined,
    display_name: s.displayName,
    categories: s.categories ?? [],
    auth_mode: s.authMode,
    authorization_url: s.authorizationUrl,
    token_url: s.tokenUrl,
    refresh_url: s.refreshUrl,
    request_token_url: s.requestTokenUrl,
    connection_configuration: configFieldNames(s),
    post_connection_script: s.postConnection?.name ?? s.postConnectionScript,
    webhook_routing_script: s.webhooks?.name ?? s.webhookRoutingScript,
    webhooks: s.webhooks as Record<string, unknown> | undefined,
    token_response: s.tokenResponse as Record<string, unknown> | undefined,
    post_connection: s.postConnection ? declaredPostConnection(s.postConnection) : undefined,
    proxy: s.proxy
      ? compact({
          base_url: s.proxy.baseUrl,
          decompress: s.proxy.decompress ?? false,
          headers: s.proxy.headers,
          query: s.proxy.query,
          body: s.proxy.body,
          paginate: paginate
            ? compact({
                type: paginate.type,
                cursor_path_in_response: paginate.cursorPathInResponse,
                limit_name_in_request: paginate.limitNameInRequest,
                cursor_name_in_request: paginate.cursorNameInRequest,
                response_path: paginate.responsePath,
              })
            : undefined,
        })
      : undefined,
    docs: s.docs,
    default_scopes: s.defaultScopes,
    scope_separator: s.scopeSeparator,
    authorization_params: s.authorizationParams,
    app_name_param: s.appNameParam,
    authorization_omits: s.authorizationOmits,
    authorization_param_names: s.authorizationParamNames,
    required_authorization_params: s.requiredAuthorizationParams,
    callback_code_param: s.callbackCodeParam,
    redirect_uri_is_name: s.redirectUriIsName,
    token_params: s.tokenParams,
    token_request_auth_method: s.tokenRequestAuthMethod,
    token_request_body_format: s.tokenRequestBodyFormat,
    token_request_omits: s.tokenRequestOmits,
    token_request_param_names: s.tokenRequestParamNames,
    client_certificate: s.clientCertificate ? { api_calls: s.clientCertificate.apiCalls === true } : undefined,
    disable_pkce: s.disablePkce,
    field_labels: s.fieldLabels,
    field_help: s.fieldHelp
      ? Object.fromEntries(
          Object.entries(s.fieldHelp).map(([k, h]) => [
            k,
            compact({
              description: h.description,
              example: h.example,
              docs_url: h.docsUrl,
              labels: h.labels,
              descriptions: h.descriptions,
            }),
          ]),
        )
      : undefined,
    mode_options: s.modeOptions,
    logo_url: providerLogoUrl(p, publicBaseUrl),
    ...modeViews(s),
    // After the blocks above: the mode's own block (JWT's is the generic mode_options, which keeps its place).
    ...shownModeOptions(s),
  }) as ProviderView;
}

/** `postConnection` as declared, less the steps' `documentedUrl` (the catalog test's, not the API's). */
function declaredPostConnection(pc: PostConnectionSpec): Record<string, unknown> {
  return { ...pc, steps: pc.steps.map(({ documentedUrl: _documented, ...step }) => step) };
}

/** The typed credentials' check and the grant's revocation (the CRD allows each only on its modes), in snake_case. */
function modeViews(s: ProviderSpec): Partial<ProviderView> {
  const { verification: check, revocation: revoke } = s;
  return compact({
    verification: check
      ? compact({ docs: check.docs, method: check.method ?? 'GET', path: check.path, headers: check.headers })
      : undefined,
    revocation: revoke
      ? compact({
          docs: revoke.docs,
          url: revoke.url,
          method: revoke.method ?? 'POST',
          token: revoke.token,
          token_in: revoke.tokenIn ?? 'form',
          token_field: revoke.tokenField,
          client_auth: revoke.clientAuth,
        })
      : undefined,
  });
}

/** Case-insensitive match of a search string against the provider's name, display name and categories. */
/** Views already built, per public base URL, per Provider object (the informer replaces the object on every change). */
const builtViews = new Map<string, WeakMap<ProviderResource, ProviderView>>();

/**
 * {@link providerView}, built once per Provider object: `GET /providers` answers every Provider, and
 * building 1,000 views took about 9 ms of each answer (bench/catalog.ts). The view is shared between
 * answers: callers serialize it and never change it.
 */
export function cachedProviderView(p: ProviderResource, publicBaseUrl: string): ProviderView {
  let views = builtViews.get(publicBaseUrl);
  if (!views) builtViews.set(publicBaseUrl, (views = new WeakMap()));
  let view = views.get(p);
  if (!view) views.set(p, (view = providerView(p, publicBaseUrl)));
  return view;
}

export function providerMatches(p: ProviderResource, search: string | undefined): boolean {
  if (!search) return true;
  const q = search.toLowerCase();
  return [p.metadata.name, p.spec.displayName, ...(p.spec.aliases ?? []), ...(p.spec.categories ?? [])].some((v) =>
    v.toLowerCase().includes(q),
  );
}

function compact<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
