/**
 * Operation log entries of end-user authorization attempts (start, provider redirect, callback,
 * token exchange). A re-authorization that fails is also put in the connection's `errors` with the
 * entry's ID as `log_id`, so whoever looks at the connection finds why.
 */
import type { AppContext } from '../context/app-context.js';
import { recordFailedReauthorization } from '../connections/service.js';
import { connectionObjectName } from '../k8s/names.js';
import type { Outcome } from '../oplog/entry.js';
import type { LatchkeyError } from '../domain/errors.js';

export interface AttemptInput {
  namespace: string;
  integration: string;
  endUserId?: string;
  reconnect?: { integration: string; connectionId: string };
  step: 'start' | 'form' | 'callback' | 'token_exchange' | 'post_connection' | 'account_choice';
  outcome: Outcome;
  messages: string[];
  secrets?: Array<string | undefined>;
  durationMs?: number;
}

export function logAttempt(deps: Pick<AppContext, 'oplog'>, a: AttemptInput): string | undefined {
  const r = a.reconnect;
  return deps.oplog?.record({
    namespace: a.namespace,
    operation: 'authorization',
    step: a.step,
    outcome: a.outcome,
    integration: a.integration,
    endUserId: a.endUserId,
    durationMs: a.durationMs,
    messages: a.messages,
    secrets: a.secrets,
    ...(r ? { connectionId: r.connectionId, connection: { name: connectionObjectName(r.integration, r.connectionId) } } : {}),
  });
}

/** A failed attempt (as the end user saw it, plus what is behind it); for a reconnect also a connection error. */
export async function logFailedAttempt(
  deps: Pick<AppContext, 'oplog' | 'connections' | 'logger' | 'clock'>,
  a: Omit<AttemptInput, 'outcome' | 'messages'> & {
    error: LatchkeyError;
    detail?: string;
    /** false: a refusal that says nothing about the connection (it stays out of the connection's errors). */
    onConnection?: boolean;
  },
): Promise<void> {
  const messages = [`${a.error.code}: ${a.error.message}`, ...(a.detail ? [a.detail] : [])];
  const logId = logAttempt(deps, { ...a, outcome: 'failure', messages });
  const r = a.reconnect;
  if (!logId || !r || a.onConnection === false) return;
  // The ID goes into the connection's errors[]: stored first, so a client that follows it at once finds it.
  await deps.oplog?.whenStored(logId);
  await recordFailedReauthorization(deps, a.namespace, r.integration, r.connectionId, {
    logId,
    message: `Re-authorization failed: ${a.error.message}`,
  }).catch((err: unknown) =>
    deps.logger.warn({ namespace: a.namespace, err: String(err) }, 'could not record the failed re-authorization'),
  );
}
