/** What the dashboard shows, computed from the caches: never a credential in full. */
import { GRANTED_SCOPES_FIELD, recordedScopes } from '../../auth/granted-scopes.js';
import { hasShippedLogo } from '../../catalog/provider-logos.js';
import { providerWebhookUrl } from '../../catalog/webhook-url.js';
import { needsReauthorization } from '../../auth/refresh/reauthorization.js';
import { FirstInOrder } from '../../domain/first-in-order.js';
import type { CatalogStore, ConnectionScans, StoredConnection, StoredCredentials } from '../../k8s/store.js';
import type { ConnectionResource } from '../../k8s/resources.js';
import { endUserView } from '../rest/routes/connection-view.js';

export type ConnectionState = 'ready' | 'needs_reauthorization' | 'refreshing' | 'failing';
export const STATES: ConnectionState[] = ['ready', 'needs_reauthorization', 'refreshing', 'failing'];

/** `publicBaseUrl`: for the webhook URL of Integrations whose Provider declares webhooks (docs/provider-webhooks.md). */
export async function integrationsView(
  store: { catalog: CatalogStore; connectionScans: ConnectionScans },
  namespace: string,
  publicBaseUrl: string,
) {
  const counts = new Map<string, number>();
  for await (const c of store.connectionScans.scanConnections(namespace))
    counts.set(c.spec.integration, (counts.get(c.spec.integration) ?? 0) + 1);
  return store.catalog
    .listIntegrations(namespace)
    .map((i) => {
      const ready = i.status?.conditions?.find((c) => c.type === 'Ready');
      const provider = store.catalog.getProvider(i.spec.provider);
      return {
        id: i.metadata.name,
        display_name: i.spec.displayName ?? provider?.spec.displayName ?? i.metadata.name,
        provider: i.spec.provider,
        auth_mode: provider?.spec.authMode ?? null,
        // Served by this server (/connect/logos/), which the dashboard's CSP admits; a Provider's own https logo is not.
        has_logo: hasShippedLogo(i.spec.provider),
        ready: ready?.status === 'True',
        reason: ready && ready.status !== 'True' ? `${ready.reason}: ${ready.message}` : ready ? null : 'Not reconciled yet',
        connections: counts.get(i.metadata.name) ?? 0,
        webhook_url: provider?.spec.webhooks ? providerWebhookUrl(publicBaseUrl, namespace, i.metadata.name) : null,
      };
    })
    .sort((a, b) => a.id.localeCompare(b.id));
}

/** ready / needs re-authorization / refreshing (due, not failing) / failing (last refreshes failed). */
export function stateOf(c: ConnectionResource, now: number): ConnectionState {
  if (c.status?.conditions?.some((x) => x.type === 'NeedsReauthorization' && x.status === 'True')) return 'needs_reauthorization';
  if ((c.status?.refreshAttempts ?? 0) > 0 || (c.status?.errors ?? []).some((e) => e.type === 'auth')) return 'failing';
  const due = c.status?.nextRefreshAt ? Date.parse(c.status.nextRefreshAt) : Infinity;
  return due <= now ? 'refreshing' : 'ready';
}

export function connectionRow(c: ConnectionResource, now: number) {
  return {
    connection_id: c.spec.connectionId,
    integration: c.spec.integration,
    provider: c.spec.provider,
    end_user: endUserView(c),
    state: stateOf(c, now),
    expires_at: c.status?.expiresAt ?? null,
    last_refreshed_at: c.status?.lastRefreshedAt ?? null,
    last_fetched_at: c.status?.lastFetchedAt ?? null,
    errors: (c.status?.errors ?? []).map((e) => ({
      type: e.type,
      log_id: e.logId,
      message: e.message ?? null,
      occurred_at: e.occurredAt ?? null,
    })),
  };
}

export interface ConnectionSearch {
  search?: string;
  integration?: string;
  state?: ConnectionState;
  cursor?: string;
  limit: number;
}

/**
 * One page of the namespace's connections (from the cache), sorted by integration and connection
 * ID; the cursor is the last row's key, so the browser never loads more than a page.
 */
export async function searchConnections(scans: ConnectionScans, namespace: string, q: ConnectionSearch, now: number) {
  const needle = q.search?.trim().toLowerCase();
  const key = (c: ConnectionResource) => `${c.spec.integration}\u0000${c.spec.connectionId}`;
  const after = q.cursor ? Buffer.from(q.cursor, 'base64url').toString('utf8') : undefined;
  const first = new FirstInOrder<ConnectionResource>(q.limit + 1, (a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  let matching = 0;
  for await (const c of scans.scanConnections(namespace, q.integration ? { integrations: [q.integration] } : {})) {
    if (after !== undefined && key(c) <= after) continue;
    if (needle) {
      const u = c.spec.endUser;
      const hay = [c.spec.connectionId, u?.id, u?.email, u?.displayName].filter(Boolean).map((s) => s!.toLowerCase());
      if (!hay.some((s) => s.includes(needle))) continue;
    }
    if (q.state && stateOf(c, now) !== q.state) continue;
    matching += 1;
    first.offer(c);
  }
  const rows = first.items;
  const pageRows = rows.slice(0, q.limit);
  return {
    connections: pageRows.map((c) => connectionRow(c, now)),
    total_matching: matching,
    next_cursor: rows.length > q.limit ? Buffer.from(key(pageRows[pageRows.length - 1]!)).toString('base64url') : null,
  };
}

const SHOWN_IN_CLEAR = new Set(['type', 'expires_at', 'token_type', 'scope', 'username', 'client_id', 'installation_id', 'app_id']);

/** Every credential value masked: its kind and length, and the last 4 characters only for long values. */
export function maskCredentials(c: StoredCredentials): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(c)) {
    if (k === 'raw' || k === GRANTED_SCOPES_FIELD || k.startsWith('_') || v === undefined || v === null) continue;
    if (SHOWN_IN_CLEAR.has(k) && typeof v !== 'object') out[k] = String(v);
    else if (typeof v === 'string')
      out[k] = v.length >= 24 ? `•••• ${v.slice(-4)} (${v.length} characters)` : `•••• (${v.length} characters)`;
    else out[k] = '•••• (not shown)';
  }
  return out;
}

export function connectionDetail(conn: StoredConnection, now: number) {
  const c = conn.resource;
  return {
    ...connectionRow(c, now),
    metadata: c.spec.metadata ?? {},
    connection_config: c.spec.connectionConfig ?? {},
    auth_mode: c.spec.authMode,
    created_at: c.metadata.creationTimestamp ? new Date(c.metadata.creationTimestamp as unknown as string).toISOString() : null,
    next_refresh_at: c.status?.nextRefreshAt ?? null,
    refresh_attempts: c.status?.refreshAttempts ?? 0,
    needs_reauthorization: needsReauthorization(conn),
    conditions: (c.status?.conditions ?? []).map((x) => ({
      type: x.type,
      status: x.status,
      reason: x.reason,
      message: x.message,
      since: x.lastTransitionTime,
    })),
    credentials: maskCredentials(conn.credentials),
    granted_scopes: recordedScopes(conn.credentials) ?? null,
  };
}
