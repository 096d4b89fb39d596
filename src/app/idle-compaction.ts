import { performance } from 'node:perf_hooks';

/**
 * Compacts the heap again when a controller has gone quiet after its memory grew.
 *
 * A controller compacts once at the end of its first reconcile wave (compact-heap.ts). While the other
 * replicas are still busy, every status they write reaches it as a watch event, and its own refreshes
 * and reconciles go on: the heap grows again by garbage in old-generation pages (replaced index
 * entries, promoted parser objects) that V8 keeps resident until a full collection, and compacts
 * rarely. At 100,000 connections that was 15–45 MiB of RSS more than a compacting collection
 * leaves (docs/benchmarks.md, "Scale: memory"). Once the event loop is nearly idle, one compacting
 * collection gives that back; nobody waits on a controller's pause.
 *
 * A check runs every `intervalMs`: it compacts when the event loop was busy less than `idleBelow`
 * of the time since the last check, RSS has grown by at least `growthBytes` and `growthRatio` over
 * what it was after the last compaction, and the last compaction is `minGapMs` old or more.
 */
export interface IdleCompactionOptions {
  /** One compacting collection (compactHeap with its reason). */
  compact: () => void;
  /** Told what each check saw (run.ts logs it at debug). */
  onCheck?: (seen: { busy: number; rssMiB: number; baselineMiB: number; sinceLastSeconds: number; compacts: boolean }) => void;
  /** The process's RSS, bytes. */
  rss?: () => number;
  /** The event loop's utilization (0–1) since the previous call. */
  utilization?: () => number;
  now?: () => number;
  intervalMs?: number;
  idleBelow?: number;
  growthBytes?: number;
  growthRatio?: number;
  minGapMs?: number;
}

export interface IdleCompaction {
  /** Another compaction happened (e.g. the reconcile wave's): growth counts from here. */
  compacted(): void;
  /** One check, as the timer runs it; true when it compacted. */
  check(): boolean;
  stop(): void;
}

const MiB = 2 ** 20;

export function startIdleCompaction(opts: IdleCompactionOptions): IdleCompaction {
  const rss = opts.rss ?? (() => process.memoryUsage.rss());
  const utilization = opts.utilization ?? eventLoopUtilization();
  const now = opts.now ?? Date.now;
  const idleBelow = opts.idleBelow ?? 0.05;
  const growthBytes = opts.growthBytes ?? 16 * MiB;
  const growthRatio = opts.growthRatio ?? 0.1;
  const minGapMs = opts.minGapMs ?? 120_000;
  let baseline = rss();
  let lastAt = now();
  const compacted = () => {
    baseline = rss();
    lastAt = now();
  };
  const check = () => {
    // Sampled every time, so that each check sees the utilization since the one before.
    const busy = utilization();
    const current = rss();
    const since = now() - lastAt;
    const compacts = busy < idleBelow && since >= minGapMs && current - baseline >= Math.max(growthBytes, baseline * growthRatio);
    opts.onCheck?.({ busy, rssMiB: current / MiB, baselineMiB: baseline / MiB, sinceLastSeconds: since / 1000, compacts });
    if (!compacts) return false;
    opts.compact();
    compacted();
    return true;
  };
  const timer = setInterval(check, opts.intervalMs ?? 15_000);
  timer.unref();
  return { compacted, check, stop: () => clearInterval(timer) };
}

/** The event loop's utilization since the previous call (since the first call's creation for the first). */
function eventLoopUtilization(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const current = performance.eventLoopUtilization();
    const since = performance.eventLoopUtilization(current, last);
    last = current;
    return since.utilization;
  };
}
