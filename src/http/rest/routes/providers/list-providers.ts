/** `GET /providers`: the provider catalog, filtered by `search`. */
import { cachedProviderView, providerMatches } from '../../../../integrations/provider-view.js';
import { ProvidersQuery, ProvidersResponse } from '../../schemas/providers.js';
import { defineRoute, type RouteSpec } from '../define.js';
import type { RestDeps } from '../deps.js';

export function listProviders(deps: RestDeps): RouteSpec {
  return defineRoute({
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
  });
}
