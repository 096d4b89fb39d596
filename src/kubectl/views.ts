/** The tables of `logs` and `bindings` (status has its own module). */
import type { OplogEntry } from '../oplog/entry.js';
import type { CredentialBindingObject } from '../k8s/plugin-client.js';
import { age, relative, table } from './table.js';

/** A connection's operation log, oldest first (as `kubectl logs` prints). */
export function renderLog(entries: readonly OplogEntry[]): string {
  if (entries.length === 0) return 'No operation log entries for this connection.\n';
  return table(
    ['time', 'operation', 'step', 'outcome', 'duration', 'id', 'message'],
    entries.map((e) => [
      e.time,
      e.operation,
      e.step ?? '-',
      e.outcome,
      e.durationMs === undefined ? '-' : `${e.durationMs}ms`,
      e.id,
      e.messages.join(' | ') || '-',
    ]),
  );
}

function text(v: unknown): string {
  return typeof v === 'string' && v ? v : '-';
}

/** A binding as a row: what `kubectl get credentialbindings` shows, with the source connection spelled out. */
export function bindingRow(b: CredentialBindingObject, now: number, allNamespaces: boolean): string[] {
  const ref = (b.spec?.connectionRef ?? {}) as Record<string, unknown>;
  const ready = b.status?.conditions?.find((c) => c.type === 'Ready');
  return [
    ...(allNamespaces ? [b.metadata.namespace ?? ''] : []),
    b.metadata.name ?? '',
    [ref.namespace, ref.integration, ref.connectionId].every((v) => typeof v === 'string')
      ? `${ref.namespace}/${ref.integration}/${ref.connectionId}`
      : '-',
    text(b.status?.secretName),
    ready?.status ?? 'Unknown',
    ready?.reason ?? '-',
    relative(typeof b.status?.expiresAt === 'string' ? b.status.expiresAt : undefined, now),
    relative(typeof b.status?.lastSyncTime === 'string' ? b.status.lastSyncTime : undefined, now),
    age(
      b.metadata.creationTimestamp === undefined
        ? undefined
        : String(b.metadata.creationTimestamp instanceof Date ? b.metadata.creationTimestamp.toISOString() : b.metadata.creationTimestamp),
      now,
    ),
  ];
}

export function renderBindings(bindings: readonly CredentialBindingObject[], now: number, allNamespaces: boolean): string {
  if (bindings.length === 0) return 'No CredentialBindings found.\n';
  return table(
    [...(allNamespaces ? ['namespace'] : []), 'name', 'connection', 'secret', 'ready', 'reason', 'expires', 'synced', 'age'],
    bindings.map((b) => bindingRow(b, now, allNamespaces)),
  );
}

/** What the plugin says when the API server does not serve CredentialBindings. */
export const BINDINGS_NOT_INSTALLED =
  'The CredentialBinding API (credentialbindings.latchkey.dev/v1alpha1) is not installed in this cluster: ' +
  "apply Latchkey's CRDs (crds/, or the Helm chart) of a release that has it.";
