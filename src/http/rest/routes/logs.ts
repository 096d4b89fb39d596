import type { AppContext } from '../../../context/app-context.js';
import { oplogReader } from '../../../k8s/oplog-store.js';
import type { OplogStore } from '../../../k8s/oplog-store.js';
import { isEntryId, type OplogEntry } from '../../../oplog/entry.js';
import { decodeCursor } from '../../../oplog/query.js';
import { LatchkeyError } from '../../../domain/errors.js';
import { LogEntry, LogList, LogParams, ListLogsQuery } from '../schemas/logs.js';
import { defineRoute, type RouteSpec } from './define.js';

const DEFAULT_LIMIT = 50;

/** A log entry as the API shows it (snake_case, nulls for what it does not have). */
export function logEntryView(e: OplogEntry) {
  return {
    id: e.id,
    time: e.time,
    integration: e.integration ?? null,
    connection_id: e.connectionId ?? null,
    end_user_id: e.endUserId ?? null,
    operation: e.operation,
    step: e.step ?? null,
    outcome: e.outcome,
    duration_ms: e.durationMs ?? null,
    messages: e.messages,
  };
}

function reader(deps: Pick<AppContext, 'oplog'>): OplogStore {
  const r = oplogReader(deps);
  if (!r) throw new LatchkeyError('unavailable', 'logs_unavailable', 'The operation log is not configured in this process');
  return r;
}

export function logRoutes(deps: Pick<AppContext, 'oplog'>): RouteSpec[] {
  return [
    defineRoute({
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
        const page = await reader(deps).search(env.namespace, {
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
    }),
    defineRoute({
      method: 'get',
      path: '/logs/:logId',
      operationId: 'getLog',
      tag: 'Logs',
      summary: 'One operation log entry, by the ID a connection error names (`log_id`)',
      params: LogParams,
      responses: { 200: { description: 'The entry', schema: LogEntry } },
      errors: [400, 401, 404, 503],
      async handle({ params, env }) {
        const entry = isEntryId(params.logId) ? await reader(deps).get(env.namespace, params.logId) : undefined;
        if (!entry)
          throw new LatchkeyError(
            'not_found',
            'unknown_log',
            `No log entry "${params.logId}" in this environment (it may be older than the retention)`,
          );
        return { status: 200, body: logEntryView(entry) };
      },
    }),
  ];
}
