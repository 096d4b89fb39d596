/** `kubectl latchkey status`: what a person on call wants of the connections, from the Connections alone (no Secret is read). */
import type { ConnectionResource } from '../k8s/resources.js';
import { findCondition } from '../domain/conditions.js';
import { age, relative, table } from './table.js';

export interface ConnectionRef {
  namespace: string;
  name: string;
  integration: string;
  connectionId: string;
  endUser?: string;
}

export interface StatusReport {
  /** Connections by state: `Ready`, else the Ready condition's reason (`Unknown` before the controller's first write). */
  byState: Record<string, number>;
  /** Tokens that expire within the window with no refresh planned before they do. */
  expiringSoon: Array<ConnectionRef & { expiresAt: string; nextRefreshAt?: string }>;
  /** Connections whose Ready is False, with what was last recorded against them. */
  failing: Array<
    ConnectionRef & {
      reason: string;
      message: string;
      since?: string;
      lastError?: { type: string; message?: string; occurredAt?: string; logId: string };
    }
  >;
}

function ref(c: ConnectionResource): ConnectionRef {
  return {
    namespace: c.metadata.namespace ?? '',
    name: c.metadata.name,
    integration: c.spec.integration,
    connectionId: c.spec.connectionId,
    ...(c.spec.endUser?.id ? { endUser: c.spec.endUser.id } : {}),
  };
}

export function stateOf(c: ConnectionResource): string {
  const ready = findCondition(c.status?.conditions, 'Ready');
  if (!ready || ready.status === 'Unknown') return 'Unknown';
  return ready.status === 'True' ? 'Ready' : ready.reason || 'NotReady';
}

export function statusReport(connections: readonly ConnectionResource[], now: number, expiringWithinMs: number): StatusReport {
  const byState: Record<string, number> = {};
  const expiringSoon: StatusReport['expiringSoon'] = [];
  const failing: StatusReport['failing'] = [];
  for (const c of connections) {
    if (c.metadata.deletionTimestamp) continue;
    const state = stateOf(c);
    byState[state] = (byState[state] ?? 0) + 1;
    const s = c.status ?? {};
    const expires = s.expiresAt ? Date.parse(s.expiresAt) : NaN;
    const next = s.nextRefreshAt ? Date.parse(s.nextRefreshAt) : NaN;
    if (Number.isFinite(expires) && expires <= now + expiringWithinMs && !(Number.isFinite(next) && next < expires)) {
      expiringSoon.push({ ...ref(c), expiresAt: s.expiresAt!, ...(s.nextRefreshAt ? { nextRefreshAt: s.nextRefreshAt } : {}) });
    }
    const ready = findCondition(s.conditions, 'Ready');
    if (ready?.status === 'False') {
      const last = s.errors?.[s.errors.length - 1];
      failing.push({
        ...ref(c),
        reason: ready.reason,
        message: ready.message ?? '',
        ...(ready.lastTransitionTime ? { since: String(ready.lastTransitionTime) } : {}),
        ...(last
          ? {
              lastError: {
                type: last.type,
                logId: last.logId,
                ...(last.message ? { message: last.message } : {}),
                ...(last.occurredAt ? { occurredAt: last.occurredAt } : {}),
              },
            }
          : {}),
      });
    }
  }
  expiringSoon.sort((a, b) => a.expiresAt.localeCompare(b.expiresAt));
  failing.sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  return { byState, expiringSoon, failing };
}

/** The report as tables; the NAMESPACE column only across namespaces, as kubectl does. */
export function renderStatus(report: StatusReport, opts: { now: number; allNamespaces: boolean; expiringWithinMs: number }): string {
  const ns = (r: ConnectionRef) => (opts.allNamespaces ? [r.namespace] : []);
  const nsHeader = opts.allNamespaces ? ['namespace'] : [];
  const total = Object.values(report.byState).reduce((a, b) => a + b, 0);
  if (total === 0) return 'No connections found.\n';
  const states = Object.entries(report.byState).sort(([a], [b]) => (a === 'Ready' ? -1 : b === 'Ready' ? 1 : a.localeCompare(b)));
  let out = table(
    ['state', 'connections'],
    states.map(([state, n]) => [state, String(n)]),
  );
  out += `\nExpiring within ${duration(opts.expiringWithinMs)} with no refresh planned: ${report.expiringSoon.length}\n`;
  if (report.expiringSoon.length)
    out += table(
      [...nsHeader, 'name', 'integration', 'connection id', 'end user', 'expires'],
      report.expiringSoon.map((e) => [
        ...ns(e),
        e.name,
        e.integration,
        e.connectionId,
        e.endUser ?? '-',
        `${e.expiresAt} (${relative(e.expiresAt, opts.now)})`,
      ]),
    );
  out += `\nFailing: ${report.failing.length}\n`;
  if (report.failing.length)
    out += table(
      [...nsHeader, 'name', 'integration', 'connection id', 'reason', 'since', 'last error'],
      report.failing.map((f) => [
        ...ns(f),
        f.name,
        f.integration,
        f.connectionId,
        f.reason,
        age(f.since, opts.now),
        f.lastError ? `${f.lastError.message ?? f.lastError.type} (log ${f.lastError.logId})` : f.message,
      ]),
    );
  return out;
}

/** A window in its largest whole unit, days from two on: `24h`, `7d`, `30m`, `90s`. */
function duration(ms: number): string {
  if (ms >= 2 * 86_400_000 && ms % 86_400_000 === 0) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}
