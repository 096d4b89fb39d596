/**
 * Bodies of the integrations API, in the shapes of Nango's public API (`@nangohq/types`:
 * `PostPublicIntegration`, `PatchPublicIntegration`, `ApiPublicIntegration`).
 */
import { z } from 'zod';
import { IsoTimestamp } from './common.js';

/** An integration ID is the Integration object's name: a DNS label (lower case, digits, '-'). */
export const IntegrationKey = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be lower case letters, digits and "-" (it becomes a Kubernetes object name)');

const Secretish = z.string().min(1).max(16_384);

export const IntegrationCredentialsInput = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.enum(['OAUTH1', 'OAUTH2', 'TBA']),
    client_id: Secretish,
    client_secret: Secretish,
    scopes: z.string().max(8192).optional(),
    webhook_secret: z
      .string()
      .max(1024)
      .optional()
      .describe("The secret the provider signs its webhooks with (the Secret's webhookSecret)"),
  }),
  z.strictObject({ type: z.literal('APP'), app_id: Secretish, app_link: z.string().max(2048), private_key: Secretish }),
]);

/** Forwarding follows the Provider (its `webhooks` block), not a switch per Integration: `true` is refused, not ignored. */
const noForwarding = z
  .literal(false, { message: "Forwarding follows the Provider's webhooks settings; it cannot be switched on here" })
  .optional();

/** A configuration key's name, as the Integration's CRD allows it. */
const ConfigKey = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, 'must be a configuration key name (a letter, then letters, digits or _; at most 64)');

/**
 * Latchkey's extension of Nango's bodies: the Integration's `spec.connectionConfig`, the values of the Provider's
 * `setBy: integration` keys (a self-managed server's host). Checked against the Provider's rule for each key.
 */
const DESCRIBED =
  "Latchkey's extension: values of the Provider's setBy: integration configuration keys (the Integration's spec.connectionConfig), such as a self-managed server's host";
const ConnectionConfigInput = z
  .record(ConfigKey, z.string().min(1).max(1024))
  .refine((o) => Object.keys(o).length <= 16, 'at most 16 keys')
  .optional()
  .describe(DESCRIBED);
const ConnectionConfigChange = z
  .record(ConfigKey, z.string().max(1024).nullable())
  .refine((o) => Object.keys(o).length <= 16, 'at most 16 keys')
  .optional()
  .describe(`${DESCRIBED}; merged key by key, null or "" removes a key`);

export const CreateIntegrationBody = z.strictObject({
  provider: z.string().min(1).max(253),
  unique_key: IntegrationKey,
  display_name: z.string().min(1).max(128).optional(),
  credentials: IntegrationCredentialsInput.optional(),
  forward_webhooks: noForwarding,
  connection_config: ConnectionConfigInput,
});

export const UpdateIntegrationBody = z.strictObject({
  unique_key: IntegrationKey.optional(),
  display_name: z.string().max(128).optional().describe('An empty string goes back to the provider display name'),
  credentials: IntegrationCredentialsInput.optional(),
  forward_webhooks: noForwarding,
  connection_config: ConnectionConfigChange,
});

export const IntegrationParams = z.strictObject({ uniqueKey: z.string().min(1).max(253) });

/** `include` may repeat, or list values separated by commas (the Nango client sends the last one only). */
export const IntegrationQuery = z.strictObject({
  include: z
    .union([z.string().max(64), z.array(z.string().max(64)).max(4)])
    .optional()
    .transform((v) => (v === undefined ? [] : (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(','))))
    .pipe(z.array(z.enum(['webhook', 'credentials']))),
});

const Nullable = z.string().nullable();

export const Integration = z.object({
  unique_key: z.string(),
  provider: z.string(),
  display_name: z.string(),
  logo: z.string().optional().describe("The Provider's logoUrl, when it has one"),
  forward_webhooks: z.boolean(),
  connection_config: z
    .record(z.string(), z.string())
    .optional()
    .describe("Latchkey's extension: the Integration's spec.connectionConfig (the Provider's setBy: integration keys), when it has any"),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp,
  webhook_url: Nullable.optional().describe(
    "With include=webhook: where the provider sends this integration's webhooks (null when its Provider declares none)",
  ),
  credentials: z
    .union([
      z.object({
        type: z.enum(['OAUTH1', 'OAUTH2', 'TBA']),
        client_id: Nullable,
        client_secret: Nullable,
        scopes: Nullable,
        webhook_secret: Nullable,
      }),
      z.object({ type: z.literal('APP'), app_id: Nullable, private_key: Nullable, app_link: Nullable }),
      z.null(),
    ])
    .optional()
    .describe('With include=credentials: the client credentials (null for providers that need none)'),
});

export const IntegrationResponse = z.object({ data: Integration });
export const IntegrationsResponse = z.object({ data: z.array(Integration) });
export const DeletedResponse = z.object({ success: z.literal(true) });
