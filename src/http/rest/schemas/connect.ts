import { z } from 'zod';
import { ConnectionId, EndUserInput, IntegrationId, IsoTimestamp, OrganizationInput, Tags } from './common.js';

export const ConnectSessionBody = z.strictObject({
  end_user: EndUserInput,
  organization: OrganizationInput.optional(),
  allowed_integrations: z
    .array(IntegrationId)
    .min(1)
    .max(100)
    .optional()
    .describe("Integration IDs offered; all of the environment's when absent"),
  tags: Tags.optional(),
});

export const ReconnectSessionBody = z.strictObject({
  connection_id: ConnectionId,
  integration_id: IntegrationId,
  end_user: EndUserInput.optional(),
  organization: OrganizationInput.optional(),
  tags: Tags.optional(),
});

export const ConnectSessionResponse = z.object({
  data: z.object({
    token: z.string(),
    expires_at: IsoTimestamp,
    connect_link: z.string().describe('Opens the Connect UI with this session'),
  }),
});
