/** `GET /logs`: the environment's operation log, newest first, filtered and paged. */
import type { AppContext } from '../../../../context/app-context.js';
import { LatchkeyError } from '../../../../domain/errors.js';
import { decodeCursor } from '../../../../oplog/query.js';
import { ListLogsQuery, LogList } from '../../schemas/logs.js';
import { defineRoute, type RouteSpec } from '../define.js';
import { logEntryView, logReader } from './log-view.js';

const DEFAULT_LIMIT = 50;

export function listLogs(deps: Pick<AppContext, 'oplog'>): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/logs',
    operationId: 'listLogs',
    tag: 'Logs',
    summary: 'Search the operation log',
    description:
      'Authorization attempts, refreshes, imports, deletions, webhook deliveries, proxy failures and stored-format migrations of this environment, newest first. Retention is per connection (at least the last 50 entries or 7 days by default) and a bounded ring for attempts without a connection.',
    query: ListLogsQuery,
    responses: { 200: { description: 'One page of entries', schema: LogList } },
    errors: [400, 401, 503],
    async handle({ query, env }) {
      if (query.cursor && !decodeCursor(query.cursor)) {
        throw new LatchkeyError('invalid_input', 'invalid_query', 'Invalid query parameters', {
          errors: [{ path: 'query.cursor', message: 'invalid cursor', code: 'invalid_cursor' }],
        });
      }
      if (query.from && query.to && Date.parse(query.from) > Date.parse(query.to)) {
        throw new LatchkeyError('invalid_input', 'invalid_query', 'Invalid query parameters', {
          errors: [{ path: 'query.from', message: 'must not be after `to`', code: 'invalid_range' }],
        });
      }
      const page = await logReader(deps).search(env.namespace, {
        integration: query.integration ?? query.provider_config_key,
        connectionId: query.connection_id,
        endUserId: query.end_user_id,
        operation: query.operation,
        outcome: query.outcome,
        from: query.from,
        to: query.to,
        cursor: query.cursor,
        limit: query.limit ?? DEFAULT_LIMIT,
      });
      return { status: 200, body: { logs: page.entries.map(logEntryView), next_cursor: page.nextCursor ?? null } };
    },
  });
}
