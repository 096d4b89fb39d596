/** `PATCH /integrations/{uniqueKey}` (Nango's): an integration's display name or client credentials. */
import type { IntegrationsService } from '../../../../../integrations/service.js';
import { IntegrationParams, IntegrationResponse, UpdateIntegrationBody } from '../../../schemas/integrations.js';
import { defineRoute, type RouteSpec } from '../../define.js';
import { WRITES } from '../writes.js';

export function updateIntegration(service: IntegrationsService): RouteSpec {
  return defineRoute({
    method: 'patch',
    path: '/integrations/:uniqueKey',
    operationId: 'updateIntegration',
    tag: 'Integrations',
    summary: "Change an integration's display name or client credentials",
    description: `${WRITES} The ID cannot change; credentials in a Secret the API did not create answer 409.`,
    params: IntegrationParams,
    body: UpdateIntegrationBody,
    responses: { 200: { description: 'The changed integration', schema: IntegrationResponse } },
    errors: [400, 401, 403, 404, 409],
    handle: async ({ env, params, body }) => ({
      status: 200,
      body: { data: await service.update(env.resource, params.uniqueKey, body) },
    }),
  });
}
