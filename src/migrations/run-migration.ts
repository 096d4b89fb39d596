import type { OperationLog } from '../oplog/operation-log.js';
import type { ConnectionResource } from '../k8s/resources.js';
import type { ConnectionMigration } from './migration.js';

/** The part of `ConnectionRewrites` (src/k8s) a run uses. */
export interface ConnectionsToRewrite {
  all(namespace?: string): AsyncIterable<ConnectionResource>;
  rewriteSpec(
    c: ConnectionResource,
    change: (current: ConnectionResource) => ConnectionResource['spec'] | undefined,
  ): Promise<ConnectionResource | undefined>;
}

export interface MigrationReport {
  migration: string;
  dryRun: boolean;
  /** `namespace/name` of each Connection changed (or, in a dry run, that would be). */
  changed: string[];
  /** Connections left as they are that a person must act on, with the reason. */
  attention: Array<{ connection: string; reason: string }>;
}

/**
 * Runs one migration over every Connection (of the given namespaces; none: the whole cluster). Each change is written by
 * compare-and-swap and recorded in the connection's operation log (operation `migration`, the step
 * its name); a dry run writes nothing and records nothing.
 */
export async function runMigration(
  migration: ConnectionMigration,
  deps: { connections: ConnectionsToRewrite; oplog?: OperationLog },
  opts: { dryRun?: boolean; namespaces?: string[]; args?: string[] } = {},
): Promise<MigrationReport> {
  const args = opts.args ?? [];
  const report: MigrationReport = { migration: migration.name, dryRun: opts.dryRun === true, changed: [], attention: [] };
  const namespaces = opts.namespaces?.length ? opts.namespaces : [undefined];
  for (const namespace of namespaces)
    for await (const c of deps.connections.all(namespace)) {
      const name = `${c.metadata.namespace}/${c.metadata.name}`;
      const plan = migration.plan(c, args);
      if (!plan) continue;
      if ('attention' in plan) {
        report.attention.push({ connection: name, reason: plan.attention });
        continue;
      }
      if (opts.dryRun) {
        report.changed.push(name);
        continue;
      }
      let change = plan.change;
      const written = await deps.connections.rewriteSpec(c, (current) => {
        const again = migration.plan(current, args);
        if (!again || 'attention' in again) return undefined;
        change = again.change;
        return again.spec;
      });
      if (!written) continue;
      report.changed.push(name);
      deps.oplog?.record({
        namespace: c.metadata.namespace!,
        operation: 'migration',
        step: migration.name,
        outcome: 'success',
        integration: c.spec.integration,
        connectionId: c.spec.connectionId,
        connection: { name: c.metadata.name!, uid: written.metadata.uid },
        messages: [change],
      });
    }
  await deps.oplog?.flush();
  return report;
}
