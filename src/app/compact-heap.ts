import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from '../platform/log.js';
import { heapCompactionSeconds, type Registry } from '../platform/metrics.js';

/** The `gc` function `--expose-gc` gives, with the options for V8's last-resort collection. */
export type LastResortGc = (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/** The options that make `gc` V8's last-resort (compacting, memory-reducing) collection. */
export const LAST_RESORT = { type: 'major', execution: 'sync', flavor: 'last-resort' } as const;

let gc: LastResortGc | undefined;

/**
 * One compacting collection, for after a burst of start-up work: the caches' first sync, and in a
 * controller alone in its process the first reconcile of its share, and later when that controller
 * goes quiet after its heap grew (idle-compaction.ts) (`reason` says which).
 *
 * The initial lists leave the heap's pages half full: the parsed pages of each list answer, the
 * copies the string pool replaced and the client's deserialized objects die among the cached
 * objects that stay. V8's regular collections keep those pages (and its pool of freed ones)
 * resident; at 10,000 connections a server held 96.5 MiB of heap pages for 67.5 MiB of objects, and
 * 232 MiB of RSS, which one compacting collection brought to 68.5 and 170 MiB (docs/benchmarks.md,
 * "Scale: memory"). It pauses the process once, before it is ready, so no request waits on it.
 *
 * The collection is V8's "last resort" one (what it runs when memory runs out), reached through
 * the `gc` function a new context gets once `--expose-gc` is set; the main context gets no global
 * `gc` (contexts made afterwards, e.g. by `vm`, do: V8 installs it when it makes a context).
 * The pause is logged and, with a registry, observed in `latchkey_heap_compaction_seconds`.
 */
export function compactHeap(
  logger: Logger,
  reason: 'caches synced' | 'reconcile wave done' | 'idle after growth',
  metrics?: Registry,
): void {
  try {
    if (!gc) {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as LastResortGc;
    }
    const rssBefore = process.memoryUsage.rss();
    const t0 = performance.now();
    gc(LAST_RESORT);
    const ms = performance.now() - t0;
    const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
    logger.info(
      { reason, rssMiBBefore: mib(rssBefore), rssMiBAfter: mib(process.memoryUsage.rss()), ms: Math.round(ms) },
      'heap compacted',
    );
    if (metrics) heapCompactionSeconds(metrics).observe({ reason }, ms / 1000);
  } catch (err) {
    // Only memory is at stake: carry on with the heap as it is.
    logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not compact the heap');
  }
}
