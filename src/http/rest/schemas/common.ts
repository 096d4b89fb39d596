import { z } from 'zod';

/** `{ error: { code, message, errors? } }`, the body of every error answer. */
export const ErrorBody = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    errors: z.array(z.object({ path: z.string().optional(), message: z.string(), code: z.string().optional() })).optional(),
  }),
});

/** A boolean query parameter: true/false (also 1/0, yes/no). */
export const queryBoolean = () => z.stringbool();

/** A free-form JSON object (metadata, connection configuration). */
export const JsonObject = z.record(z.string(), z.unknown());

export const IntegrationId = z.string().min(1).max(63);
export const ConnectionId = z.string().min(1).max(255);

export const Tags = z.record(z.string().max(255), z.string().max(1024));

/** End user as an application sends it (connection import, connect sessions). */
export const EndUserInput = z.strictObject({
  id: z.string().min(1).max(255),
  email: z.string().max(320).optional(),
  display_name: z.string().max(255).optional(),
  tags: Tags.optional(),
});

export const OrganizationInput = z.strictObject({
  id: z.string().min(1).max(255),
  display_name: z.string().max(255).optional(),
});

export const IsoTimestamp = z.string().describe('ISO 8601 timestamp');
