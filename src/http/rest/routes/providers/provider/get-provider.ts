/** `GET /providers/{provider}`: one provider of the catalog. */
import { cachedProviderView } from '../../../../../integrations/provider-view.js';
import { LatchkeyError } from '../../../../../domain/errors.js';
import { ProviderParams, ProviderResponse } from '../../../schemas/providers.js';
import { defineRoute, type RouteSpec } from '../../define.js';
import type { RestDeps } from '../../deps.js';

export function getProvider(deps: RestDeps): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/providers/:provider',
    operationId: 'getProvider',
    tag: 'Providers',
    summary: 'Get one provider',
    params: ProviderParams,
    responses: { 200: { description: 'The provider', schema: ProviderResponse } },
    errors: [400, 401, 404],
    handle: ({ params }) => {
      const p = deps.catalog.getProvider(params.provider);
      if (!p) throw new LatchkeyError('not_found', 'unknown_provider', `No provider "${params.provider}" in the catalog`);
      return { status: 200, body: { data: cachedProviderView(p, deps.config.publicBaseUrl) } };
    },
  });
}
