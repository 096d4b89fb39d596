/** `GET /integrations/{uniqueKey}` (Nango's): one integration, with its webhook URL or credentials when asked. */
import type { IntegrationsService } from '../../../../../integrations/service.js';
import { IntegrationParams, IntegrationQuery, IntegrationResponse } from '../../../schemas/integrations.js';
import { defineRoute, type RouteSpec } from '../../define.js';

export function getIntegration(service: IntegrationsService): RouteSpec {
  return defineRoute({
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
  });
}
