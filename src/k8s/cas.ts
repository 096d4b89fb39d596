import { backoffDelay } from '../domain/backoff.js';
import { conflictRetriesExhausted, isConflict } from './errors.js';

export interface CasOptions<T> {
  /** Cheap first read (usually the informer cache); may be stale. */
  readCached?: () => T | undefined;
  /** Authoritative read from the API server, used after a conflict. */
  readFresh: () => Promise<T>;
  /** Returns the object to write, or undefined when nothing needs to change. */
  mutate: (current: T) => T | undefined | Promise<T | undefined>;
  /** Writes with the resourceVersion the object carries; the API server answers 409 when it moved on. */
  write: (next: T) => Promise<T>;
  what: string;
  attempts?: number;
}

/** Pause after the n-th conflict: anywhere up to 20 ms × 2^(n−1), at most 1 s ("full jitter"). */
const CONFLICT_BACKOFF = { baseMs: 20, maxMs: 1000, jitter: 1 };

/**
 * Compare-and-swap update: read, change, write with the read resourceVersion; on a conflict read
 * again from the API server and redo the change, so concurrent writers never lose each other's work.
 */
export async function compareAndSwap<T>(opts: CasOptions<T>): Promise<T> {
  const attempts = opts.attempts ?? 12;
  let current = opts.readCached?.() ?? (await opts.readFresh());
  for (let attempt = 1; ; attempt++) {
    const next = await opts.mutate(structuredClone(current));
    if (next === undefined) return current;
    try {
      return await opts.write(next);
    } catch (err) {
      if (!isConflict(err)) throw err;
      if (attempt >= attempts) throw conflictRetriesExhausted(opts.what, err);
      // Jittered, exponentially growing pause: a crowd of writers spreads out instead of colliding
      // again in lockstep (one of N wins each round, so a fixed window starves the last ones).
      await new Promise((r) => setTimeout(r, backoffDelay(CONFLICT_BACKOFF, attempt)));
      current = await opts.readFresh();
    }
  }
}
