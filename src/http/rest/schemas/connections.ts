import { z } from 'zod';
import { expiresAtInput } from '../../../modes/shared/credential-schemas.js';
import type { CredentialsSchema } from '../../../modes/auth-mode.js';
import { importCredentialSchemas, shownCredentialSchemas } from '../../../modes/registry.js';
import { ConnectionId, EndUserInput, IntegrationId, IsoTimestamp, JsonObject, queryBoolean, Tags } from './common.js';

// ---- credentials ----

const MAX_EXPIRES_IN_SECONDS = 100 * 366 * 86_400;

/** Credentials accepted by POST /connections, discriminated by `type` (the Nango client's import shapes): each mode's own (src/modes/<mode>/mode.ts). */
export const ImportCredentials = z.discriminatedUnion('type', importCredentialSchemas() as [CredentialsSchema, ...CredentialsSchema[]]);
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
  expires_at: expiresAtInput.optional(),
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

/** A connection's credentials as its answer shows them: each mode's own (src/modes/<mode>/mode.ts). */
export const PublicCredentials = z.union(shownCredentialSchemas());

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

export const Connection = z.object({
  ...connectionCommon,
  credentials: PublicCredentials,
  granted_scopes: z
    .array(z.string())
    .nullable()
    .describe(
      "The scopes the provider granted: its token answer's `scope`, else those requested; null when the connection's auth mode has no scopes or none were asked for",
    ),
});

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
