import { z } from 'zod';
import { AUTH_MODES } from '../../../domain/auth-modes.js';

const StringMap = z.record(z.string(), z.string());

export const Provider = z.object({
  name: z.string(),
  display_name: z.string(),
  categories: z.array(z.string()),
  auth_mode: z.enum(AUTH_MODES),
  authorization_url: z.string().optional(),
  token_url: z.string().optional(),
  refresh_url: z.string().optional(),
  request_token_url: z.string().optional(),
  connection_configuration: z.array(z.string()),
  post_connection_script: z.string().optional(),
  webhook_routing_script: z.string().optional(),
  proxy: z
    .object({
      base_url: z.string().optional(),
      decompress: z.boolean().optional(),
      headers: StringMap.optional(),
      query: StringMap.optional(),
      paginate: z
        .object({
          type: z.string().optional(),
          cursor_path_in_response: z.string().optional(),
          limit_name_in_request: z.string().optional(),
          cursor_name_in_request: z.string().optional(),
          response_path: z.string().optional(),
        })
        .optional(),
    })
    .optional(),
  docs: z.string().optional(),
  default_scopes: z.array(z.string()).optional(),
  scope_separator: z.string().optional(),
  authorization_params: StringMap.optional(),
  token_params: StringMap.optional(),
  token_request_auth_method: z.enum(['basic', 'body']).optional(),
  disable_pkce: z.boolean().optional(),
  field_labels: StringMap.optional(),
  mode_options: z.record(z.string(), z.unknown()).optional(),
});

export const ProviderParams = z.strictObject({ provider: z.string().min(1).max(253) });
export const ProvidersQuery = z.object({ search: z.string().max(256).optional() });
export const ProviderResponse = z.object({ data: Provider });
export const ProvidersResponse = z.object({ data: z.array(Provider) });
