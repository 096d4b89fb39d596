/**
 * A Connect session token completes at most one connection per integration it offers (a reconnect
 * session: its one re-authorization). The tokens are sealed and stateless, so the "used" mark is a
 * flow marker in the cluster (src/k8s/flow-records.ts) keyed by the session ID and the integration:
 * the API server's AlreadyExists answer makes it once-only across replicas. It expires with the
 * session and is swept with the other flow records.
 */
import type { Logger } from '../platform/log.js';
import { LatchkeyError } from '../domain/errors.js';
import type { FlowRecords } from '../k8s/flow-records.js';

export interface SessionUse {
  namespace: string;
  /** The session's random ID (the token's `sid`, never the token). */
  sid: string;
  integration: string;
  reconnect: boolean;
  /** The session's expiry (ms since the epoch): after it the token is refused anyway. */
  expiresAtMs: number;
}

/** The marker's key; flow IDs are random base64url, so they never take this form. */
const markerKey = (use: SessionUse) => `session/${use.sid}/${use.integration}`;

export function sessionAlreadyUsed(use: Pick<SessionUse, 'reconnect'>): LatchkeyError {
  return new LatchkeyError(
    'conflict',
    'session_already_used',
    use.reconnect
      ? 'This reconnect link was already used. Ask the application for a new link.'
      : 'This connect session already connected this integration. Ask the application for a new link.',
  );
}

/** Refuses a session that already completed this integration (the OAuth start: before the end user signs in for nothing). */
export async function refuseUsedSession(flows: FlowRecords, use: SessionUse): Promise<void> {
  if (await flows.isUsed(use.namespace, markerKey(use))) throw sessionAlreadyUsed(use);
}

/** Takes the mark before a completion saves anything, or throws `session_already_used`. */
export async function claimSession(flows: FlowRecords, use: SessionUse): Promise<void> {
  if (!(await flows.markUsed(use.namespace, markerKey(use), use.expiresAtMs))) throw sessionAlreadyUsed(use);
}

/** Takes the mark back after a completion that saved nothing, so the end user can try again. Never throws. */
export async function releaseSession(deps: { flows: FlowRecords; logger: Logger }, use: SessionUse): Promise<void> {
  await deps.flows
    .unmarkUsed(use.namespace, markerKey(use))
    .catch((err: unknown) =>
      deps.logger.warn(
        { namespace: use.namespace, integration: use.integration, err: (err as Error).message },
        'could not take back a connect session mark after a failed completion (the session needs a new link)',
      ),
    );
}

/**
 * Runs `complete` (asking the provider, saving the connection) once per session and integration:
 * the mark is taken first, so of two completions on any replicas only one runs; when `complete`
 * fails nothing was saved and the mark is taken back.
 */
export async function completeOnce<T>(
  deps: { flows: FlowRecords; logger: Logger },
  use: SessionUse,
  complete: () => Promise<T>,
): Promise<T> {
  await claimSession(deps.flows, use);
  try {
    return await complete();
  } catch (err) {
    await releaseSession(deps, use);
    throw err;
  }
}
