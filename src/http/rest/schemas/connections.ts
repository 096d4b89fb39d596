import { z } from 'zod';
import { ConnectionId, EndUserInput, IntegrationId, IsoTimestamp, JsonObject, queryBoolean, Tags } from './common.js';

// ---- credentials ----

const MAX_EXPIRES_IN_SECONDS = 100 * 366 * 86_400;

const expiresAt = z.union([z.iso.datetime({ offset: true }), z.iso.date()]).describe('ISO 8601 date or date-time');

/** Credentials accepted by POST /connections, discriminated by `type` (the Nango client's import shapes). */
export const ImportCredentials = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('OAUTH2'),
    access_token: z.string().min(1),
    refresh_token: z.string().min(1).optional(),
    expires_at: expiresAt.optional(),
    config_override: z.strictObject({ client_id: z.string().optional(), client_secret: z.string().optional() }).optional(),
  }),
  // MCP_OAUTH2: tokens for a remote MCP server obtained elsewhere (not renewed: the authorization server was not discovered here).
  z.strictObject({
    type: z.literal('MCP_OAUTH2'),
    access_token: z.string().min(1),
    refresh_token: z.string().min(1).optional(),
    expires_at: expiresAt.optional(),
  }),
  z.strictObject({ type: z.literal('OAUTH1'), oauth_token: z.string().min(1), oauth_token_secret: z.string().min(1) }),
  z.strictObject({ type: z.literal('API_KEY'), apiKey: z.string().min(1) }),
  // INSTALL_PLUGIN: the credential a plugin installation issued (what its install callback carries).
  z.strictObject({ type: z.literal('INSTALL_PLUGIN'), apiKey: z.string().min(1).max(4096) }),
  z.strictObject({ type: z.literal('BASIC'), username: z.string(), password: z.string() }),
  z.strictObject({
    type: z.literal('OAUTH2_CC'),
    token: z.string().min(1),
    expires_at: expiresAt.optional(),
    client_id: z.string().min(1),
    client_secret: z.string().min(1),
  }),
  z.strictObject({
    type: z.literal('JWT'),
    apiKey: z
      .string()
      .min(1)
      .max(16_384)
      .describe(
        "The signing key (the provider's `fieldLabels.apiKey` says which); a token is minted from it at once, and a key that cannot sign is a 400",
      ),
  }),
  z.strictObject({
    type: z.literal('APP'),
    installation_id: z
      .string()
      .regex(/^[0-9]{1,20}$/, 'must be the installation ID (digits)')
      .optional()
      .describe(
        "The installation of the Integration's app (or connection_config.installationId); checked with the provider and a token minted at once",
      ),
  }),
  z.strictObject({ type: z.literal('NONE') }),
  z
    .object({ type: z.literal('TWO_STEP') })
    .catchall(z.string().max(4096))
    .describe("The fields the provider's `twoStep.credentialFields` name; exchanged for a token at once (a refusal is a 400)"),
  z
    .strictObject({
      type: z.literal('BILL'),
      username: z.string().min(1).max(320),
      password: z.string().min(1).max(1024),
      organization_id: z.string().min(1).max(64),
      dev_key: z.string().min(1).max(256),
    })
    .describe('A Bill.com sign-in; a session is opened at once (a refusal is a 400)'),
  z
    .strictObject({
      type: z.literal('APP_STORE'),
      issuer_id: z.string().min(1).max(64),
      key_id: z.string().min(1).max(32),
      private_key: z.string().min(1).max(16_384).describe('Contents of the .p8 file'),
    })
    .describe('An App Store Connect API key; a token is minted at once (a key that cannot sign ES256 is a 400)'),
  z.strictObject({
    type: z.literal('TBA'),
    token_id: z.string().min(1).max(1024).describe('The access token ID created in NetSuite for this account'),
    token_secret: z.string().min(1).max(1024),
    config_override: z
      .strictObject({ client_id: z.string().min(1).optional(), client_secret: z.string().min(1).optional() })
      .optional()
      .describe("The consumer key and secret when they are not the Integration's (never returned)"),
  }),
  z.strictObject({
    type: z.literal('SIGNATURE'),
    username: z.string().min(1).max(1024),
    password: z.string().min(1).max(4096).describe('The secret the signature is computed from'),
  }),
]);
export type ImportCredentials = z.infer<typeof ImportCredentials>;

export const ImportConnectionBody = z.strictObject({
  provider_config_key: IntegrationId,
  connection_id: ConnectionId.optional(),
  credentials: ImportCredentials,
  metadata: JsonObject.optional(),
  connection_config: JsonObject.optional(),
  end_user: EndUserInput.optional(),
  tags: Tags.optional(),
});
export type ImportConnectionBody = z.infer<typeof ImportConnectionBody>;

/** The deprecated POST /connection: flat fields, interpreted by the provider's auth mode. */
export const DeprecatedImportBody = z.strictObject({
  provider_config_key: IntegrationId,
  connection_id: ConnectionId.optional(),
  access_token: z.string().min(1).optional(),
  refresh_token: z.string().min(1).optional(),
  expires_at: expiresAt.optional(),
  // Bounded: a lifetime past year 275760 is not a Date, and none is longer than a century.
  expires_in: z.number().int().positive().max(MAX_EXPIRES_IN_SECONDS).optional().describe('Seconds from now, at most 100 years'),
  no_expiration: z.boolean().optional(),
  oauth_client_id_override: z.string().min(1).optional(),
  oauth_client_secret_override: z.string().min(1).optional(),
  oauth_token: z.string().min(1).optional(),
  oauth_token_secret: z.string().min(1).optional(),
  username: z.string().optional(),
  password: z.string().optional(),
  api_key: z.string().min(1).optional(),
  token_id: z.string().min(1).max(1024).optional().describe('TBA: the access token ID'),
  token_secret: z.string().min(1).max(1024).optional().describe('TBA: the access token secret'),
  metadata: JsonObject.optional(),
  connection_config: JsonObject.optional(),
  end_user: EndUserInput.optional(),
});
export type DeprecatedImportBody = z.infer<typeof DeprecatedImportBody>;

// ---- the Connection object ----

const raw = JsonObject.describe("The provider's raw token response");
export const PublicCredentials = z.union([
  z.object({
    type: z.literal('OAUTH2'),
    access_token: z.string(),
    refresh_token: z.string().optional(),
    expires_at: IsoTimestamp.optional(),
    raw,
  }),
  z.object({
    type: z.literal('MCP_OAUTH2'),
    access_token: z.string(),
    refresh_token: z.string().optional(),
    expires_at: IsoTimestamp.optional(),
    raw: raw.optional(),
    mcp: z
      .object({
        server_url: z.string().describe('The MCP server'),
        resource: z.string().describe("The resource (RFC 8707) the tokens are for: the server's canonical URI"),
        issuer: z.string().describe('The authorization server the server named'),
        token_endpoint: z.string(),
        client_registration: z.enum(['pre-registered', 'metadata-document', 'dynamic']),
        scope: z.string().optional().describe('The scopes granted'),
      })
      .optional()
      .describe('What was discovered from the server URL (absent on imported tokens)'),
  }),
  z.object({ type: z.literal('OAUTH1'), oauth_token: z.string(), oauth_token_secret: z.string(), raw }),
  z.object({ type: z.literal('API_KEY'), apiKey: z.string() }),
  z.object({
    type: z.literal('INSTALL_PLUGIN'),
    apiKey: z.string().describe('The credential the plugin installation issued'),
    raw: raw.optional(),
  }),
  z.object({ type: z.literal('BASIC'), username: z.string(), password: z.string() }),
  z.object({
    type: z.literal('OAUTH2_CC'),
    token: z.string(),
    expires_at: IsoTimestamp.optional(),
    client_id: z.string(),
    client_secret: z.string(),
    raw,
  }),
  z.object({ type: z.literal('APP'), access_token: z.string(), expires_at: IsoTimestamp.optional(), raw }),
  z.object({
    type: z.literal('JWT'),
    apiKey: z.string().describe('The signing key'),
    token: z.string().describe('A JWT minted from the key, valid until expires_at (a fresh one is minted before it expires)'),
    expires_at: IsoTimestamp,
  }),
  z.object({ type: z.literal('NONE') }),
  z
    .object({
      type: z.literal('TWO_STEP'),
      token: z.string().describe("The provider's token for the stored fields (exchanged again before expires_at)"),
      expires_at: IsoTimestamp.optional(),
      raw,
    })
    .catchall(z.unknown()),
  z.object({
    type: z.literal('BILL'),
    username: z.string(),
    password: z.string(),
    organization_id: z.string(),
    dev_key: z.string(),
    session_id: z.string().describe('The Bill.com session (sent as the sessionId header); signed in again before expires_at'),
    user_id: z.string().optional(),
    expires_at: IsoTimestamp,
  }),
  z.object({
    type: z.literal('APP_STORE'),
    issuer_id: z.string(),
    key_id: z.string(),
    private_key: z.string(),
    access_token: z.string().describe('An ES256 token for the App Store Connect API, valid until expires_at (at most 20 minutes)'),
    expires_at: IsoTimestamp,
  }),
  z.object({ type: z.literal('TBA'), token_id: z.string(), token_secret: z.string() }),
  z.object({
    type: z.literal('SIGNATURE'),
    username: z.string(),
    password: z.string(),
    token: z
      .string()
      .optional()
      .describe('GET /connections/{id}: a value computed for this answer (WSSE: the X-WSSE header value), accepted until expires_at'),
    expires_at: IsoTimestamp.optional(),
  }),
]);

export const EndUser = z.object({
  id: z.string(),
  email: z.string().nullable(),
  display_name: z.string().nullable(),
  tags: z.record(z.string(), z.string()),
  organization: z.object({ id: z.string(), display_name: z.string().nullable() }).nullable(),
});

export const ConnectionErrorEntry = z.object({
  type: z.string(),
  log_id: z.string().describe('ID of the operation log entry recording the failure: `GET /logs/{log_id}`, or paste it in the dashboard'),
});

const connectionCommon = {
  id: z.number().int(),
  connection_id: z.string(),
  provider_config_key: z.string(),
  provider: z.string(),
  errors: z.array(ConnectionErrorEntry),
  end_user: EndUser.nullable(),
  metadata: JsonObject,
  connection_config: JsonObject,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp,
  last_fetched_at: IsoTimestamp.nullable().describe(
    'When the credentials were last fetched (GET /connections/{id}); null until the first fetch, so the creation and import answers carry null, as Nango answers',
  ),
};

export const Connection = z.object({ ...connectionCommon, credentials: PublicCredentials });

export const ConnectionSummary = z.object({
  ...connectionCommon,
  created: IsoTimestamp.describe('Same as created_at (name used by the Nango client)'),
  tags: z.record(z.string(), z.string()),
});

export const ConnectionsList = z.object({
  connections: z.array(ConnectionSummary),
  next_cursor: z.string().nullable().describe('Pass as `cursor` to get the next page; null on the last page'),
});

// ---- parameters ----

export const ConnectionParams = z.strictObject({ connectionId: ConnectionId });

export const GetConnectionQuery = z.object({
  provider_config_key: IntegrationId,
  force_refresh: queryBoolean().optional(),
  refresh_token: queryBoolean().optional(),
  refresh_codehost_app_jwt_token: queryBoolean().optional(),
  refresh_github_app_jwt_token: queryBoolean().optional().describe("Alias of refresh_codehost_app_jwt_token (the Nango client's name)"),
});

export const IntegrationQuery = z.object({ provider_config_key: IntegrationId });

export const ListConnectionsQuery = z.object({
  connectionId: z.string().max(255).optional(),
  search: z.string().max(255).optional().describe('Substring of the connection ID, end user ID, e-mail or display name'),
  endUserId: z.string().max(255).optional(),
  end_user_id: z.string().max(255).optional(),
  endUserEmail: z.string().max(320).optional(),
  end_user_email: z.string().max(320).optional(),
  endUserOrganizationId: z.string().max(255).optional(),
  integrationId: z.string().max(4096).optional().describe('Integration ID, or several separated by commas'),
  provider_config_key: z.string().max(4096).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  cursor: z.string().max(1024).optional(),
  offset: z.coerce.number().int().min(0).optional(),
  page: z.coerce.number().int().min(0).optional().describe('Page number (from 0) of `limit` entries'),
});

export const DeleteResponse = z.object({ success: z.boolean() });

// ---- metadata ----

export const MetadataBody = z.strictObject({
  connection_id: z.union([ConnectionId, z.array(ConnectionId).min(1).max(100)]),
  provider_config_key: IntegrationId,
  metadata: JsonObject,
});
export const MetadataResponse = z.object({
  connection_id: z.union([z.string(), z.array(z.string())]),
  provider_config_key: z.string(),
  metadata: JsonObject.describe('For one connection: its metadata after the update; for several: the metadata sent'),
});
export const LegacyMetadataQuery = z.object({
  provider_config_key: IntegrationId.optional().describe('Required (or the Provider-Config-Key header)'),
});
