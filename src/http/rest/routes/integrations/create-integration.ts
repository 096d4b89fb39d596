/** `POST /integrations` (Nango's): an Integration and its client Secret, where the Environment allows it. */
import type { IntegrationsService } from '../../../../integrations/service.js';
import { CreateIntegrationBody, IntegrationResponse } from '../../schemas/integrations.js';
import { defineRoute, type RouteSpec } from '../define.js';
import { WRITES } from './writes.js';

export function createIntegration(service: IntegrationsService): RouteSpec {
  return defineRoute({
    method: 'post',
    path: '/integrations',
    operationId: 'createIntegration',
    tag: 'Integrations',
    summary: 'Create an integration (an Integration object and its client Secret)',
    description: WRITES,
    body: CreateIntegrationBody,
    responses: { 200: { description: 'The new integration', schema: IntegrationResponse } },
    errors: [400, 401, 403, 409],
    handle: async ({ env, body }) => ({ status: 200, body: { data: await service.create(env.resource, body) } }),
  });
}
