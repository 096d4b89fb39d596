/**
 * One copy of each repeated string in the informer caches.
 *
 * JSON.parse gives every object its own copy of every string value, and cached objects repeat most
 * of theirs: namespaces, label keys and values, the integration and provider, every condition's type,
 * reason and message, timestamps written in the same second. Those copies were about a third of a
 * cached Connection's heap (docs/benchmarks.md, "Scale: memory"); sharing them costs one map lookup
 * per string when an object enters the cache.
 *
 * The pool is bounded: when it holds `maxEntries` strings it starts again empty. Strings already
 * shared stay shared (the objects hold them); strings seen once (names, uids) only pass through.
 */
export class StringPool {
  private pool = new Map<string, string>();

  constructor(
    private readonly maxEntries = 50_000,
    /** Longer strings are left alone: they are rarely repeated, and a lookup hashes the whole string. */
    private readonly maxLength = 1024,
  ) {}

  intern(s: string): string {
    if (s.length > this.maxLength) return s;
    const shared = this.pool.get(s);
    if (shared !== undefined) return shared;
    if (this.pool.size >= this.maxEntries) this.pool = new Map();
    this.pool.set(s, s);
    return s;
  }

  get size(): number {
    return this.pool.size;
  }
}

/** Nesting below this is left as parsed (no recursion without end on a hostile object). */
const MAX_DEPTH = 24;

/**
 * Replaces, in place, the string values of a parsed object (and its nested objects and arrays) with
 * their pooled copies. Values under a key in `skip` are left alone, with everything below them (a
 * Secret's `data`: credentials are neither repeated nor worth a place in a shared table).
 */
export function internStrings(value: unknown, pool: StringPool, skip: ReadonlySet<string> = NO_KEYS, depth = 0): void {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'string') value[i] = pool.intern(item);
      else internStrings(item, pool, skip, depth + 1);
    }
    return;
  }
  const obj = value as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    if (skip.has(key)) continue;
    const item = obj[key];
    if (typeof item === 'string') obj[key] = pool.intern(item);
    else internStrings(item, pool, skip, depth + 1);
  }
}

const NO_KEYS: ReadonlySet<string> = new Set();
