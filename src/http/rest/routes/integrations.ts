/** The integrations API (Nango's `/integrations` endpoints): thin routes over the integrations service. */
import { IntegrationsService } from '../../../integrations/service.js';
import {
  CreateIntegrationBody,
  DeletedResponse,
  IntegrationParams,
  IntegrationQuery,
  IntegrationResponse,
  IntegrationsResponse,
  UpdateIntegrationBody,
} from '../schemas/integrations.js';
import { defineRoute, type RouteSpec } from './define.js';
import type { RestDeps } from './deps.js';

const WRITES =
  'Refused with 403 `integration_writes_disabled` unless the Environment sets `spec.api.integrationWrites: true` (the chart must also grant `rbac.integrationWrites`).';

export function integrationRoutes(deps: RestDeps): RouteSpec[] {
  const service = new IntegrationsService(deps);
  return [
    defineRoute({
      method: 'get',
      path: '/integrations',
      operationId: 'listIntegrations',
      tag: 'Integrations',
      summary: "List the environment's integrations",
      responses: { 200: { description: 'Integrations, sorted by ID', schema: IntegrationsResponse } },
      errors: [401],
      handle: ({ env }) => ({ status: 200, body: { data: service.list(env.namespace) } }),
    }),
    defineRoute({
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
    }),
    defineRoute({
      method: 'get',
      path: '/integrations/:uniqueKey',
      operationId: 'getIntegration',
      tag: 'Integrations',
      summary: 'Get one integration',
      description:
        '`include=webhook` adds `webhook_url`; `include=credentials` adds the client credentials, the client secret included (this API needs the secret key).',
      params: IntegrationParams,
      query: IntegrationQuery,
      responses: { 200: { description: 'The integration', schema: IntegrationResponse } },
      errors: [400, 401, 404],
      handle: ({ env, params, query }) => ({
        status: 200,
        body: { data: service.get(env.namespace, params.uniqueKey, new Set(query.include)) },
      }),
    }),
    defineRoute({
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
    }),
    defineRoute({
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
    }),
  ];
}
