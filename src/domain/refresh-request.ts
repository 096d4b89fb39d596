/**
 * A person's request that a connection be refreshed now (`kubectl latchkey refresh` writes the time
 * of the request in an annotation), and the record the owning controller keeps of the last one it
 * handled (another annotation). The record is what makes a request count once: a request whose time
 * the record already names is done, whether it comes again (a re-applied manifest, a retried
 * command) or not.
 */

/** What became of a request. `InProgress`: claimed, its refresh running. */
export const REFRESH_REQUEST_OUTCOMES = ['InProgress', 'Refreshed', 'Failed', 'AlreadyRefreshed', 'NotRenewable', 'Invalid'] as const;
export type RefreshRequestOutcome = (typeof REFRESH_REQUEST_OUTCOMES)[number];

/** The controller's record of the last request it handled. */
export interface RefreshRequestRecord {
  /** The request's annotation value, as written. */
  requestedAt: string;
  outcome: RefreshRequestOutcome;
  /** When the outcome was recorded (ISO 8601). */
  at: string;
  /** What happened, for people; never a credential (refresh failures' messages are the refresher's, already in status). */
  message?: string;
}

export type RefreshRequestDecision =
  | { kind: 'none' }
  /** Refresh now. */
  | { kind: 'refresh'; requestedAt: string }
  /** A refresh already happened after the request was made: nothing to do but say so. */
  | { kind: 'satisfied'; requestedAt: string; lastRefreshedAt: string }
  /** Not a time: recorded as such, never retried. */
  | { kind: 'invalid'; requestedAt: string };

/** The record in its annotation, or undefined when absent or not one (hand-edited). */
export function parseRefreshRequestRecord(text: string | undefined): RefreshRequestRecord | undefined {
  if (!text) return undefined;
  try {
    const r = JSON.parse(text) as Partial<RefreshRequestRecord>;
    if (typeof r.requestedAt !== 'string' || !REFRESH_REQUEST_OUTCOMES.includes(r.outcome as RefreshRequestOutcome)) return undefined;
    return {
      requestedAt: r.requestedAt,
      outcome: r.outcome!,
      at: String(r.at ?? ''),
      ...(r.message ? { message: String(r.message) } : {}),
    };
  } catch {
    return undefined;
  }
}

/**
 * What to do about a connection's request annotation: nothing when there is none or the record names
 * it (handled: a repeated request is the same request); `satisfied` when the connection was refreshed
 * at or after the requested time (a stale request: the refresh it asked for has happened).
 */
export function decideRefreshRequest(
  requestedAt: string | undefined,
  record: RefreshRequestRecord | undefined,
  lastRefreshedAt: string | undefined,
): RefreshRequestDecision {
  if (!requestedAt || record?.requestedAt === requestedAt) return { kind: 'none' };
  const asked = Date.parse(requestedAt);
  if (!Number.isFinite(asked)) return { kind: 'invalid', requestedAt };
  const last = lastRefreshedAt ? Date.parse(lastRefreshedAt) : NaN;
  if (Number.isFinite(last) && last >= asked) return { kind: 'satisfied', requestedAt, lastRefreshedAt: lastRefreshedAt! };
  return { kind: 'refresh', requestedAt };
}
