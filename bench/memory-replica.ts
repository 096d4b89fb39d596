/**
 * One Latchkey replica for bench/memory.ts and bench/soak.ts, in its own process (forked with `--expose-gc`): started
 * as `latchkey server|controller` starts (src/app/run.ts, configured from the environment), plus an
 * IPC hook that reports memory after a forced GC, so the figure is what the replica retains, not
 * garbage that a collection would free.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapSpaceStatistics, getHeapStatistics, writeHeapSnapshot } from 'node:v8';
import { LAST_RESORT, type LastResortGc } from '../src/app/compact-heap.js';
import { loadConfig } from '../src/platform/config.js';
import { createLogger } from '../src/platform/log.js';
import { runLatchkey } from '../src/app/run.js';
import { loadKubeConfig } from '../src/k8s/client.js';

export type ReplicaKind = 'server' | 'controller';

export interface MemoryReport {
  /** After the forced collections. */
  rssBytes: number;
  /** As the process ran, before the forced collections. */
  rssBeforeGcBytes: number;
  /** Highest RSS since the process started (VmHWM): the start-up peak. */
  peakRssBytes: number;
  heapUsedBytes: number;
  /** V8 heap pages committed and resident (used or not): what the heap adds to RSS. */
  heapPhysicalBytes: number;
  /** Memory V8 itself allocated with malloc (outside its heap pages). */
  mallocedBytes: number;
  externalBytes: number;
  /** Per V8 heap space: resident and used bytes (where the resident-but-unused heap is). */
  spaces: Record<string, { physicalBytes: number; usedBytes: number }>;
  /**
   * After one more collection that compacts every page it can (V8's last-resort GC, as when memory
   * runs short): what is left of `heapPhysicalBytes - heapUsedBytes` is not fragmentation.
   */
  compacted: { rssBytes: number; heapUsedBytes: number; heapPhysicalBytes: number };
  /** Where the RSS is, by kind of mapping (/proc/self/smaps). */
  mappings: ResidentByMapping;
  /** Path of a heap snapshot taken after the collections (with BENCH_MEMORY_HEAP_SNAPSHOT_DIR set). */
  heapSnapshot?: string;
}

/** Resident bytes by kind of mapping. */
export interface ResidentByMapping {
  /** Mapped files: the node binary's pages, shared libraries. */
  fileBytes: number;
  /** glibc's main malloc arena (`[heap]`). */
  brkHeapBytes: number;
  /** Anonymous mappings of 256 KiB, V8's regular heap pages. */
  v8PageSizedBytes: number;
  /** glibc's thread arenas: anonymous mappings starting on a 64 MiB boundary (their reservation size). */
  arenaBytes: number;
  /** Every other anonymous mapping: V8's large-object and code pages, stacks, mmapped mallocs. */
  otherAnonymousBytes: number;
}

const MiB = 1024 * 1024;

/**
 * V8 reports its own heap, not what malloc holds (sockets' buffers, TLS, zlib, Node's C++ objects);
 * smaps tells the two apart by mapping.
 */
function residentByMapping(): ResidentByMapping {
  const out: ResidentByMapping = { fileBytes: 0, brkHeapBytes: 0, v8PageSizedBytes: 0, arenaBytes: 0, otherAnonymousBytes: 0 };
  let start = 0n;
  let size = 0n;
  let name = '';
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      start = BigInt(`0x${header[1]!}`);
      size = BigInt(`0x${header[2]!}`) - start;
      name = header[3]!;
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (!rss) continue;
    const bytes = Number(rss[1]) * 1024;
    if (name.startsWith('/')) out.fileBytes += bytes;
    else if (name === '[heap]') out.brkHeapBytes += bytes;
    else if (name !== '') out.otherAnonymousBytes += bytes;
    else if (size === 256n * 1024n) out.v8PageSizedBytes += bytes;
    else if (start % BigInt(64 * MiB) === 0n) out.arenaBytes += bytes;
    else out.otherAnonymousBytes += bytes;
  }
  return out;
}

/** Messages the parent sends. */
export type ReplicaCommand = 'measure' | 'stop';

async function start(kind: ReplicaKind): Promise<() => Promise<void>> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const kc = loadKubeConfig(config.kubeconfig);
  const running = await runLatchkey({ config, logger, kc, components: [kind] });
  return () => running.stop();
}

function peakRss(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

function measure(): MemoryReport {
  const gc = (globalThis as { gc?: LastResortGc }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  const rssBeforeGcBytes = process.memoryUsage.rss();
  // Twice: the first collection can leave weakly held objects (WeakMap values) for the second.
  gc();
  gc();
  const usage = process.memoryUsage();
  const heap = getHeapStatistics();
  return {
    rssBytes: usage.rss,
    rssBeforeGcBytes,
    peakRssBytes: peakRss(),
    heapUsedBytes: heap.used_heap_size,
    heapPhysicalBytes: heap.total_physical_size,
    mallocedBytes: heap.malloced_memory,
    externalBytes: usage.external,
    spaces: Object.fromEntries(
      getHeapSpaceStatistics().map((sp) => [sp.space_name, { physicalBytes: sp.physical_space_size, usedBytes: sp.space_used_size }]),
    ),
    mappings: residentByMapping(),
    compacted: compactedFigures(gc),
    ...(process.env.BENCH_MEMORY_HEAP_SNAPSHOT_DIR
      ? { heapSnapshot: writeHeapSnapshot(join(process.env.BENCH_MEMORY_HEAP_SNAPSHOT_DIR, `${kind}-${process.pid}.heapsnapshot`)) }
      : {}),
  };
}

function compactedFigures(gc: LastResortGc): MemoryReport['compacted'] {
  gc(LAST_RESORT);
  const heap = getHeapStatistics();
  return { rssBytes: process.memoryUsage.rss(), heapUsedBytes: heap.used_heap_size, heapPhysicalBytes: heap.total_physical_size };
}

const kind = process.argv[2] as ReplicaKind;
start(kind).then(
  (stop) => {
    process.on('message', (command: ReplicaCommand) => {
      if (command === 'measure') process.send!({ memory: measure() });
      if (command === 'stop') void stop().finally(() => process.exit(0));
    });
  },
  (err: unknown) => {
    process.stderr.write(`memory-replica ${kind}: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
