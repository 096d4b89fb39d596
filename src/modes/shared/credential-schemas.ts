/**
 * The parts every mode's REST credential schemas share (`credentialSchemas` of a mode module): the
 * REST API's import and connection schemas, and so the OpenAPI document, are the union of the modes'.
 */
import { z } from 'zod';

/** An expiry as an import body gives it. */
export const expiresAtInput = z.union([z.iso.datetime({ offset: true }), z.iso.date()]).describe('ISO 8601 date or date-time');

/** A time as a connection's answer shows it. */
export const shownTimestamp = z.string().describe('ISO 8601 timestamp');

/** The provider's token answer as a connection's answer shows it. */
export const rawAnswer = z.record(z.string(), z.unknown()).describe("The provider's raw token response");

/** The tokens of an OAuth 2 grant as an import body gives them (OAUTH2, MCP_OAUTH2). */
export const grantImportFields = {
  access_token: z.string().min(1),
  refresh_token: z.string().min(1).optional(),
  expires_at: expiresAtInput.optional(),
};

/** The tokens of an OAuth 2 grant as a connection's answer shows them (OAUTH2, MCP_OAUTH2). */
export const grantShownFields = {
  access_token: z.string(),
  refresh_token: z.string().optional(),
  expires_at: shownTimestamp.optional(),
};
