import { randomUUID } from 'node:crypto';
import { recordedScopes } from '../../../auth/granted-scopes.js';
import { toPublicCredentials } from '../../../domain/credentials.js';
import type { ConnectionResource } from '../../../k8s/resources.js';
import type { StoredConnection } from '../../../k8s/store.js';
import { moduleOfCredentials } from '../../../modes/registry.js';

/** The end user as the API shows it, or null when the connection has none. */
export function endUserView(c: ConnectionResource) {
  const u = c.spec.endUser;
  if (!u?.id) return null;
  return {
    id: u.id,
    email: u.email ?? null,
    display_name: u.displayName ?? null,
    tags: u.tags ?? {},
    organization: u.organization?.id ? { id: u.organization.id, display_name: u.organization.displayName ?? null } : null,
  };
}

function common(c: ConnectionResource, lastFetchedAt?: string) {
  const created = isoOf(c.metadata.creationTimestamp) ?? new Date(0).toISOString();
  return {
    id: c.spec.id,
    connection_id: c.spec.connectionId,
    provider_config_key: c.spec.integration,
    provider: c.spec.provider,
    errors: (c.status?.errors ?? []).map((e) => ({ type: e.type, log_id: e.logId })),
    end_user: endUserView(c),
    metadata: c.spec.metadata ?? {},
    connection_config: c.spec.connectionConfig ?? {},
    created_at: created,
    updated_at: c.status?.updatedAt ?? created,
    last_fetched_at: lastFetchedAt ?? c.status?.lastFetchedAt ?? null,
  };
}

/** The full Connection object (every field of the spec's table). */
export function connectionView(conn: StoredConnection, opts: { includeRefreshToken?: boolean; lastFetchedAt?: string } = {}) {
  return {
    ...common(conn.resource, opts.lastFetchedAt),
    credentials: toPublicCredentials(conn.credentials, { includeRefreshToken: opts.includeRefreshToken ?? false }),
    // Beside the credentials, not in them: Nango's credential shapes stay as they are.
    granted_scopes: recordedScopes(conn.credentials) ?? null,
  };
}

/**
 * The fetch's answer as JSON text: `connectionView` serialized once per stored connection object
 * (one per Connection and Secret version, src/k8s/store.ts) and option, for the connections fetched
 * most recently, with only the fetch time put in on each answer. Building and serializing the view was the largest share of Latchkey's own work
 * on the fetch path (docs/benchmarks.md). SIGNATURE credentials, new on every answer, are never reused.
 */
export function connectionAnswer(conn: StoredConnection, opts: { includeRefreshToken: boolean; lastFetchedAt: string }): string {
  let parts = answers.get(conn);
  const which = opts.includeRefreshToken ? 1 : 0;
  let split = parts?.[which];
  if (!split) {
    const text = JSON.stringify(connectionView(conn, { includeRefreshToken: opts.includeRefreshToken, lastFetchedAt: FETCH_TIME_MARK }));
    const at = text.indexOf(MARK_JSON);
    split = [text.slice(0, at), text.slice(at + MARK_JSON.length)];
    // Not kept when the answer carries a value computed for it (SIGNATURE).
    if (!moduleOfCredentials(conn.credentials)?.proxy.perUse) {
      if (!parts) {
        // Bounded (about 1 KiB each): the oldest entry goes first, as would a replaced version's.
        if (answers.size >= KEPT_ANSWERS) answers.delete(answers.keys().next().value!);
        parts = [undefined, undefined];
        answers.set(conn, parts);
      }
      parts[which] = split;
    }
  }
  return split[0] + JSON.stringify(opts.lastFetchedAt) + split[1];
}

/** A fetch time as ISO 8601, made once per millisecond (a busy replica answers several fetches in one). */
export function fetchTimeOf(now: number): string {
  if (now !== lastFetchTime.at) {
    lastFetchTime.at = now;
    lastFetchTime.iso = new Date(now).toISOString();
  }
  return lastFetchTime.iso;
}

const lastFetchTime = { at: Number.NaN, iso: '' };

/** Stands for the fetch time in a kept answer: no stored value can contain it (new at every start). */
const FETCH_TIME_MARK = `fetch-time-${randomUUID()}`;
const MARK_JSON = JSON.stringify(FETCH_TIME_MARK);
const KEPT_ANSWERS = 5_000;
const answers = new Map<StoredConnection, [[string, string] | undefined, [string, string] | undefined]>();

/** A list entry: the Connection without credentials, plus the Nango client's `created` and `tags`. */
export function connectionSummary(c: ConnectionResource) {
  const base = common(c);
  return { ...base, created: base.created_at, tags: c.spec.endUser?.tags ?? {} };
}

function isoOf(v: unknown): string | undefined {
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'string' && Number.isFinite(Date.parse(v))) return new Date(v).toISOString();
  return undefined;
}
