import type { AppContext } from '../../../../context/app-context.js';
import { LatchkeyError } from '../../../../domain/errors.js';
import { oplogReader, type OplogStore } from '../../../../k8s/oplog-store.js';
import type { OplogEntry } from '../../../../oplog/entry.js';

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

/** The operation log's reader, or 503 where this process has none. */
export function logReader(deps: Pick<AppContext, 'oplog'>): OplogStore {
  const r = oplogReader(deps);
  if (!r) throw new LatchkeyError('unavailable', 'logs_unavailable', 'The operation log is not configured in this process');
  return r;
}
