/** `DELETE /integrations/{uniqueKey}` (Nango's): an integration without connections, and the client Secret the API made. */
import type { IntegrationsService } from '../../../../../integrations/service.js';
import { DeletedResponse, IntegrationParams } from '../../../schemas/integrations.js';
import { defineRoute, type RouteSpec } from '../../define.js';
import { WRITES } from '../writes.js';

export function deleteIntegration(service: IntegrationsService): RouteSpec {
  return defineRoute({
    method: 'delete',
    path: '/integrations/:uniqueKey',
    operationId: 'deleteIntegration',
    tag: 'Integrations',
    summary: 'Delete an integration without connections (and the client Secret the API made for it)',
    description: `${WRITES} An integration that still has connections answers 409.`,
    params: IntegrationParams,
    responses: { 200: { description: 'Deleted', schema: DeletedResponse } },
    errors: [400, 401, 403, 404, 409],
    handle: async ({ env, params }) => {
      await service.delete(env.resource, params.uniqueKey);
      return { status: 200, body: { success: true } };
    },
  });
}
