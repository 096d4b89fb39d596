import type { ProviderResource } from '../k8s/resources.js';
import { configFieldNames } from './connection-config.js';

/** The spec's Provider record (snake_case), plus Latchkey's extra catalog fields in snake_case. */
export interface ProviderView {
  name: string;
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
  proxy?: {
    base_url?: string;
    decompress?: boolean;
    headers?: Record<string, string>;
    query?: Record<string, string>;
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
  token_params?: Record<string, string>;
  token_request_auth_method?: 'basic' | 'body';
  disable_pkce?: boolean;
  field_labels?: Record<string, string>;
  mode_options?: Record<string, unknown>;
}

/** A Provider custom resource as the REST API shows it. Absent optional fields are left out. */
export function providerView(p: ProviderResource): ProviderView {
  const s = p.spec;
  const paginate = s.proxy?.paginate;
  return compact({
    name: p.metadata.name,
    display_name: s.displayName,
    categories: s.categories ?? [],
    auth_mode: s.authMode,
    authorization_url: s.authorizationUrl,
    token_url: s.tokenUrl,
    refresh_url: s.refreshUrl,
    request_token_url: s.requestTokenUrl,
    connection_configuration: configFieldNames(s),
    post_connection_script: s.postConnectionScript,
    webhook_routing_script: s.webhookRoutingScript,
    proxy: s.proxy
      ? compact({
          base_url: s.proxy.baseUrl,
          decompress: s.proxy.decompress ?? false,
          headers: s.proxy.headers,
          query: s.proxy.query,
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
    token_params: s.tokenParams,
    token_request_auth_method: s.tokenRequestAuthMethod,
    disable_pkce: s.disablePkce,
    field_labels: s.fieldLabels,
    mode_options: s.modeOptions,
  }) as ProviderView;
}

/** Case-insensitive match of a search string against the provider's name, display name and categories. */
export function providerMatches(p: ProviderResource, search: string | undefined): boolean {
  if (!search) return true;
  const q = search.toLowerCase();
  return [p.metadata.name, p.spec.displayName, ...(p.spec.categories ?? [])].some((v) => v.toLowerCase().includes(q));
}

function compact<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
