import { newestFirst, type Operation, type OplogEntry, type Outcome } from './entry.js';

/** A search of the operation log (the REST API's `GET /logs` filters). */
export interface OplogQuery {
  integration?: string;
  connectionId?: string;
  endUserId?: string;
  operation?: Operation;
  outcome?: Outcome;
  /** ISO 8601 bounds, inclusive. */
  from?: string;
  to?: string;
  cursor?: string;
  limit: number;
}

export interface OplogPage {
  entries: OplogEntry[];
  nextCursor?: string;
}

interface Cursor {
  t: string;
  id: string;
}

export function encodeCursor(e: OplogEntry): string {
  return Buffer.from(JSON.stringify({ t: e.time, id: e.id } satisfies Cursor)).toString('base64url');
}

/** The position a cursor names, or undefined when it is not one of ours. */
export function decodeCursor(cursor: string): Cursor | undefined {
  try {
    const c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Cursor>;
    return typeof c.t === 'string' && typeof c.id === 'string' ? { t: c.t, id: c.id } : undefined;
  } catch {
    return undefined;
  }
}

export function matches(e: OplogEntry, q: Omit<OplogQuery, 'cursor' | 'limit'>): boolean {
  if (q.integration !== undefined && e.integration !== q.integration) return false;
  if (q.connectionId !== undefined && e.connectionId !== q.connectionId) return false;
  if (q.endUserId !== undefined && e.endUserId !== q.endUserId) return false;
  if (q.operation !== undefined && e.operation !== q.operation) return false;
  if (q.outcome !== undefined && e.outcome !== q.outcome) return false;
  const t = Date.parse(e.time);
  if (q.from !== undefined && t < Date.parse(q.from)) return false;
  if (q.to !== undefined && t > Date.parse(q.to)) return false;
  return true;
}

/** One page of the matching entries, newest first, after the cursor's position. */
export function page(entries: Iterable<OplogEntry>, q: OplogQuery): OplogPage {
  const after = q.cursor ? decodeCursor(q.cursor) : undefined;
  const found: OplogEntry[] = [];
  for (const e of entries) {
    if (!matches(e, q)) continue;
    if (after && newestFirst(e, { ...e, time: after.t, id: after.id }) <= 0) continue;
    found.push(e);
  }
  found.sort(newestFirst);
  const entriesOut = found.slice(0, q.limit);
  return {
    entries: entriesOut,
    ...(found.length > q.limit ? { nextCursor: encodeCursor(entriesOut[entriesOut.length - 1]!) } : {}),
  };
}
