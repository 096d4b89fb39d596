/** `GET /logs/{logId}`: one operation log entry, by the ID a connection error names (`log_id`). */
import type { AppContext } from '../../../../../context/app-context.js';
import { LatchkeyError } from '../../../../../domain/errors.js';
import { isEntryId } from '../../../../../oplog/entry.js';
import { LogEntry, LogParams } from '../../../schemas/logs.js';
import { defineRoute, type RouteSpec } from '../../define.js';
import { logEntryView, logReader } from '../log-view.js';

export function getLog(deps: Pick<AppContext, 'oplog'>): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/logs/:logId',
    operationId: 'getLog',
    tag: 'Logs',
    summary: 'One operation log entry, by the ID a connection error names (`log_id`)',
    params: LogParams,
    responses: { 200: { description: 'The entry', schema: LogEntry } },
    errors: [400, 401, 404, 503],
    async handle({ params, env }) {
      const entry = isEntryId(params.logId) ? await logReader(deps).get(env.namespace, params.logId) : undefined;
      if (!entry)
        throw new LatchkeyError(
          'not_found',
          'unknown_log',
          `No log entry "${params.logId}" in this environment (it may be older than the retention)`,
        );
      return { status: 200, body: logEntryView(entry) };
    },
  });
}
