/** `GET /connections`: connections without credentials, filtered and paged. */
import { listConnections as listStored } from '../../../../connections/list.js';
import { ConnectionsList, ListConnectionsQuery } from '../../schemas/connections.js';
import { connectionSummary } from '../connection-view.js';
import { defineRoute, type RouteSpec } from '../define.js';
import type { RestDeps } from '../deps.js';

export function listConnections(deps: RestDeps): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/connections',
    operationId: 'listConnections',
    tag: 'Connections',
    summary: 'List connections (without credentials)',
    description:
      'Filters combine with AND. Sorted by creation time; page with `limit` and `cursor` (or `offset` / `page`; 100 per page by default). Without any of them, up to 10,000 connections in one answer, as Nango does.',
    query: ListConnectionsQuery,
    responses: { 200: { description: 'A page of connections', schema: ConnectionsList } },
    errors: [400, 401],
    async handle({ query, rawQuery, env }) {
      const { connections, nextCursor } = await listStored(
        deps.connectionScans,
        env.namespace,
        {
          connectionId: query.connectionId,
          integrations: (query.integrationId ?? query.provider_config_key)
            ?.split(',')
            .map((s) => s.trim())
            .filter(Boolean),
          endUserId: query.endUserId ?? query.end_user_id,
          endUserEmail: query.endUserEmail ?? query.end_user_email,
          endUserOrganizationId: query.endUserOrganizationId,
          search: query.search,
          tags: Object.entries(rawQuery)
            .map(([k, v]) => [/^tags\[(.+)\]$/.exec(k)?.[1], v] as const)
            .filter((e): e is readonly [string, string] => e[0] !== undefined && typeof e[1] === 'string'),
        },
        query,
      );
      return { status: 200, body: { connections: connections.map(connectionSummary), next_cursor: nextCursor } };
    },
  });
}
