import { cachedProviderView, providerMatches } from '../../../catalog/provider-view.js';
import { LatchkeyError } from '../../../domain/errors.js';
import { ProviderParams, ProviderResponse, ProvidersQuery, ProvidersResponse } from '../schemas/providers.js';
import { defineRoute, type RouteSpec } from './define.js';
import type { RestDeps } from './deps.js';

export function providerRoutes(deps: RestDeps): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/providers',
      operationId: 'listProviders',
      tag: 'Providers',
      summary: 'List the provider catalog',
      query: ProvidersQuery,
      responses: { 200: { description: 'Providers, sorted by name', schema: ProvidersResponse } },
      errors: [400, 401],
      handle: ({ query }) => ({
        status: 200,
        body: {
          data: deps.catalog
            .listProviders()
            .filter((p) => providerMatches(p, query.search))
            .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
            .map((p) => cachedProviderView(p, deps.config.publicBaseUrl)),
        },
      }),
    }),
    defineRoute({
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
    }),
  ];
}
