import { z } from 'zod';
import { ConnectionId, EndUserInput, IntegrationId, IsoTimestamp, OrganizationInput, Tags } from './common.js';

/** Authorization parameters a session may not set: the flow's own (scopes go in `connection_config.oauth_scopes_override`). */
const RESERVED_AUTHORIZATION_PARAMS = new Set([
  'client_id',
  'redirect_uri',
  'state',
  'response_type',
  'scope',
  'code_challenge',
  'code_challenge_method',
]);

/**
 * Nango's `integrations_config_defaults`, per integration ID: `connection_config.oauth_scopes_override` (the
 * scopes asked for instead of the Integration's, separated by commas or spaces) and `authorization_params`
 * (added to the authorization URL). Nango's `user_scopes` (Slack's user scopes) and other connection_config
 * defaults are refused: Latchkey does not read them.
 */
export const IntegrationsConfigDefaults = z
  .record(
    IntegrationId,
    z.strictObject({
      authorization_params: z
        .record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/), z.string().max(1024))
        .refine((p) => Object.keys(p).length <= 20, 'at most 20 authorization parameters')
        .refine((p) => !Object.keys(p).some((k) => RESERVED_AUTHORIZATION_PARAMS.has(k)), {
          message: `may not set ${[...RESERVED_AUTHORIZATION_PARAMS].join(', ')} (scopes: connection_config.oauth_scopes_override)`,
        })
        .optional(),
      connection_config: z
        .strictObject({ oauth_scopes_override: z.string().min(1).max(4096).optional() })
        .optional()
        .describe('Only oauth_scopes_override is read'),
    }),
  )
  .refine((d) => Object.keys(d).length <= 100, 'at most 100 integrations')
  .describe(
    "Per integration: `connection_config.oauth_scopes_override` (scopes asked for instead of the Integration's) and `authorization_params`, as Nango's connect sessions take them",
  );

export const ConnectSessionBody = z.strictObject({
  end_user: EndUserInput,
  organization: OrganizationInput.optional(),
  allowed_integrations: z
    .array(IntegrationId)
    .min(1)
    .max(100)
    .optional()
    .describe("Integration IDs offered; all of the environment's when absent"),
  integrations_config_defaults: IntegrationsConfigDefaults.optional(),
  tags: Tags.optional(),
});

export const ReconnectSessionBody = z.strictObject({
  connection_id: ConnectionId,
  integration_id: IntegrationId,
  end_user: EndUserInput.optional(),
  organization: OrganizationInput.optional(),
  integrations_config_defaults: IntegrationsConfigDefaults.optional(),
  tags: Tags.optional(),
});

export const ConnectSessionResponse = z.object({
  data: z.object({
    token: z.string(),
    expires_at: IsoTimestamp,
    connect_link: z.string().describe('Opens the Connect UI with this session'),
  }),
});
