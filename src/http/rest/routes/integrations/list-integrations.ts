/** `GET /integrations` (Nango's): the environment's integrations. */
import type { IntegrationsService } from '../../../../integrations/service.js';
import { IntegrationsResponse } from '../../schemas/integrations.js';
import { defineRoute, type RouteSpec } from '../define.js';

export function listIntegrations(service: IntegrationsService): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/integrations',
    operationId: 'listIntegrations',
    tag: 'Integrations',
    summary: "List the environment's integrations",
    responses: { 200: { description: 'Integrations, sorted by ID', schema: IntegrationsResponse } },
    errors: [401],
    handle: ({ env }) => ({ status: 200, body: { data: service.list(env.namespace) } }),
  });
}
