import { z } from 'zod';
import { AUTH_MODES } from '../../../domain/auth-modes.js';
import { modeOptionsViewSchemas } from '../../../modes/registry.js';

const StringMap = z.record(z.string(), z.string());

export const Provider = z.object({
  name: z.string(),
  aliases: z
    .array(z.string())
    .optional()
    .describe('Other names this provider answers to: GET /providers/{alias} answers this provider, and an Integration may name an alias'),
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
  webhooks: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      "How Latchkey verifies and routes this provider's webhooks: the Provider's `webhooks` block as declared (docs/provider-webhooks.md)",
    ),
  token_response: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("How the provider's token endpoint departs from RFC 6749: the Provider's `tokenResponse` as declared (docs/providers.md)"),
  post_connection: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      "The requests run after the token whose answers fill connection configuration: the Provider's `postConnection` as declared (docs/providers.md)",
    ),
  proxy: z
    .object({
      base_url: z.string().optional(),
      decompress: z.boolean().optional(),
      headers: StringMap.optional(),
      query: StringMap.optional(),
      body: StringMap.optional().describe(
        'Top-level fields set in the JSON object body of every proxied call (same placeholders as headers): the credential of APIs that take it in the body',
      ),
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
  app_name_param: z
    .string()
    .optional()
    .describe(
      "OAUTH1: the authorize URL parameter naming the application on the provider's consent page (the Environment's connectUI.appName, else the Integration's display name)",
    ),
  authorization_omits: z
    .array(z.enum(['client_id', 'response_type']))
    .optional()
    .describe("OAUTH2: RFC 6749 parameters the provider's authorization URL does not take (left out of it)"),
  authorization_param_names: StringMap.optional().describe(
    "OAUTH2: the provider's names for RFC 6749 authorization parameters, sent under them (TikTok: client_id as app_id)",
  ),
  required_authorization_params: z
    .array(z.string())
    .optional()
    .describe(
      "Keys of the Integration's authorization_params the provider cannot authorize without (Amazon Selling Partner: application_id)",
    ),
  callback_code_param: z
    .string()
    .optional()
    .describe("OAUTH2: the callback's parameter carrying the authorization code, when not code (Amazon Selling Partner: spapi_oauth_code)"),
  redirect_uri_is_name: z
    .boolean()
    .optional()
    .describe(
      "OAUTH2: redirect_uri is a name the provider registered for the callback URL (eBay's RuName), the Integration's redirectUriName",
    ),
  token_params: StringMap.optional(),
  token_request_auth_method: z.enum(['basic', 'body', 'private_key_jwt', 'tls_client_auth', 'none']).optional(),
  client_certificate: z
    .object({ api_calls: z.boolean() })
    .optional()
    .describe(
      "The provider requires the Integration's TLS client certificate (mutual TLS) on token requests, and on API calls when api_calls",
    ),
  token_request_body_format: z
    .enum(['form', 'json', 'query'])
    .optional()
    .describe('How token requests encode their parameters (form when absent)'),
  token_request_omits: z
    .array(z.string())
    .optional()
    .describe("Token request parameters the provider's endpoint does not take (left out of every token request)"),
  token_request_param_names: StringMap.optional().describe(
    "The provider's names for token request parameters, sent under them (TikTok: client_id, client_secret, code as app_id, secret, auth_code)",
  ),
  disable_pkce: z.boolean().optional(),
  field_labels: StringMap.optional(),
  field_help: z
    .record(
      z.string(),
      z.object({
        description: z.string().optional(),
        example: z.string().optional(),
        docs_url: z.string().optional(),
        labels: StringMap.optional(),
        descriptions: StringMap.optional(),
      }),
    )
    .optional(),
  // The generic modeOptions as declared, on any mode (JWT's options block).
  mode_options: z.record(z.string(), z.unknown()).optional(),
  logo_url: z.string().optional(),
  // Each mode's own options block, as its module shows it (src/modes/<mode>/options.ts).
  ...modeOptionsViewSchemas(),
  verification: z
    .object({
      docs: z.string().optional(),
      method: z.string(),
      path: z.string(),
      headers: z.record(z.string(), z.string()).optional(),
    })
    .optional()
    .describe('API_KEY and BASIC: the call that checks credentials typed into the Connect form before they are stored'),
  revocation: z
    .object({
      docs: z.string().optional(),
      url: z.string(),
      method: z.string(),
      token: z.enum(['refresh_token', 'access_token']).optional(),
      token_in: z.enum(['form', 'json', 'bearer']),
      token_field: z.string().optional(),
      client_auth: z.enum(['basic', 'body', 'none']).optional(),
    })
    .optional()
    .describe("OAUTH2: where a deleted connection's grant is revoked (best effort)"),
});

export const ProviderParams = z.strictObject({ provider: z.string().min(1).max(253) });
export const ProvidersQuery = z.object({ search: z.string().max(256).optional() });
export const ProviderResponse = z.object({ data: Provider });
export const ProvidersResponse = z.object({ data: z.array(Provider) });
