import type { OplogEntry } from './entry.js';

/**
 * How much of one object's log is kept. An entry stays while it is among the newest `keepEntries`
 * or younger than `keepMs` ("at least 7 days or the last 50"); `maxEntries` and `maxBytes` bound
 * the object whatever happens (a connection failing every minute, the 1 MiB object limit).
 */
export interface RetentionPolicy {
  keepEntries: number;
  keepMs: number;
  maxEntries: number;
  maxBytes: number;
}

/** The entries to keep, oldest first (the order they are stored in). */
export function retain(entries: OplogEntry[], now: number, policy: RetentionPolicy): OplogEntry[] {
  const sorted = [...entries].sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : a.id < b.id ? -1 : 1));
  const cutoff = now - policy.keepMs;
  const newestKept = sorted.length - policy.keepEntries;
  let kept = sorted.filter((e, i) => i >= newestKept || Date.parse(e.time) >= cutoff);
  if (kept.length > policy.maxEntries) kept = kept.slice(kept.length - policy.maxEntries);
  let bytes = kept.reduce((n, e) => n + entryBytes(e), 0);
  let drop = 0;
  while (bytes > policy.maxBytes && drop < kept.length) bytes -= entryBytes(kept[drop++]!);
  return drop ? kept.slice(drop) : kept;
}

/** Bytes an entry takes in storage (one JSON line). */
export function entryBytes(e: OplogEntry): number {
  return Buffer.byteLength(JSON.stringify(e)) + 1;
}
