/** Listing connections: the filters of `GET /connections`, a stable order, and opaque cursors. */
import { LatchkeyError } from '../domain/errors.js';
import type { ConnectionResource } from '../k8s/resources.js';
import type { ConnectionScans } from '../k8s/store.js';
import { FirstInOrder } from '../domain/first-in-order.js';

export const DEFAULT_PAGE = 100;

/** Filters combine with AND; an absent one matches everything. */
export interface ConnectionFilter {
  connectionId?: string;
  integrations?: string[];
  endUserId?: string;
  /** Compared case-insensitively. */
  endUserEmail?: string;
  endUserOrganizationId?: string;
  /** A case-insensitive substring of the connection ID or the end user's ID, email or display name. */
  search?: string;
  /** `tags[key]=value` pairs; `end_user_email` and `end_user_display_name` name the end user's fields. */
  tags?: ReadonlyArray<readonly [string, string]>;
}

/** The most connections one unpaged answer holds. */
export const UNPAGED_LIMIT = 10_000;

/** A cursor from a previous page, else an offset, else a page number (of `limit` items). */
export interface PageRequest {
  limit?: number;
  cursor?: string;
  offset?: number;
  page?: number;
}

export async function listConnections(
  scans: ConnectionScans,
  namespace: string,
  filter: ConnectionFilter,
  page: PageRequest,
): Promise<{ connections: ConnectionResource[]; nextCursor: string | null }> {
  // Without any paging parameter, answer as Nango does (its SDK's listConnections reads one answer).
  const paged = page.limit !== undefined || page.cursor !== undefined || page.offset !== undefined || page.page !== undefined;
  const limit = page.limit ?? (paged ? DEFAULT_PAGE : UNPAGED_LIMIT);
  const after = page.cursor !== undefined ? decodeCursor(page.cursor) : undefined;
  const skip = after ? 0 : (page.offset ?? (page.page !== undefined ? page.page * limit : 0));
  // The first skip + limit + 1 in creation order: what this page and "is there a next one" need,
  // kept as the connections stream by (a bounded store reads them page by page from the API server).
  const first = new FirstInOrder<ConnectionResource>(skip + limit + 1, byCreation);
  for await (const c of scans.scanConnections(namespace, { integrations: filter.integrations })) {
    if (!matches(c, filter) || (after && byCreation(c, after) <= 0)) continue;
    first.offer(c);
  }
  const ordered = first.items;
  const connections = ordered.slice(skip, skip + limit);
  const last = connections[connections.length - 1];
  return { connections, nextCursor: last && ordered.length > skip + limit ? encodeCursor(last) : null };
}

function matches(c: ConnectionResource, f: ConnectionFilter): boolean {
  const u = c.spec.endUser;
  if (f.connectionId !== undefined && c.spec.connectionId !== f.connectionId) return false;
  if (f.integrations?.length && !f.integrations.includes(c.spec.integration)) return false;
  if (f.endUserId !== undefined && u?.id !== f.endUserId) return false;
  if (f.endUserEmail !== undefined && u?.email?.toLowerCase() !== f.endUserEmail.toLowerCase()) return false;
  if (f.endUserOrganizationId !== undefined && u?.organization?.id !== f.endUserOrganizationId) return false;
  for (const [tag, value] of f.tags ?? []) {
    const actual = tag === 'end_user_email' ? u?.email : tag === 'end_user_display_name' ? u?.displayName : findTag(u?.tags, tag);
    if (actual !== value) return false;
  }
  const search = f.search?.toLowerCase();
  if (search && ![c.spec.connectionId, u?.id, u?.email, u?.displayName].some((v) => v?.toLowerCase().includes(search))) return false;
  return true;
}

function findTag(tags: Record<string, string> | undefined, key: string): string | undefined {
  if (!tags) return undefined;
  return tags[key] ?? Object.entries(tags).find(([k]) => k.toLowerCase() === key)?.[1];
}

function createdOf(c: ConnectionResource): string {
  return String(
    c.metadata.creationTimestamp instanceof Date ? c.metadata.creationTimestamp.toISOString() : (c.metadata.creationTimestamp ?? ''),
  );
}

type Position = { created: string; name: string };

/** Oldest first; the object name breaks ties, so the order (and a cursor into it) is stable. */
function byCreation(a: ConnectionResource | Position, b: ConnectionResource | Position): number {
  const key = (x: ConnectionResource | Position): Position => ('metadata' in x ? { created: createdOf(x), name: x.metadata.name } : x);
  const ka = key(a);
  const kb = key(b);
  return ka.created.localeCompare(kb.created) || ka.name.localeCompare(kb.name);
}

function encodeCursor(c: ConnectionResource): string {
  return Buffer.from(JSON.stringify([createdOf(c), c.metadata.name]), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): Position {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string') return { created: v[0], name: v[1] };
  } catch {
    // fall through
  }
  throw new LatchkeyError('invalid_input', 'invalid_cursor', 'cursor is not one this API returned', {
    errors: [{ path: 'query.cursor', message: 'invalid cursor', code: 'invalid_cursor' }],
  });
}
