import { systemClock } from '../domain/clock.js';
import { ConnectionRewrites } from '../k8s/connection-rewrites.js';
import type { KubeConfig } from '../k8s/kubernetes-client.js';
import { MIGRATIONS } from '../migrations/registry.js';
import { runMigration, type MigrationReport } from '../migrations/run-migration.js';
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/log.js';
import { createRegistry } from '../platform/metrics.js';
import { createOperationLog } from './context.js';

export const MIGRATE_USAGE = `usage: latchkey migrate --list
       latchkey migrate <name> [--dry-run] [--namespace NS ...] [args ...]
Without --namespace: the namespaces Latchkey watches (LATCHKEY_WATCH_NAMESPACES), else the whole cluster.`;

/** Parsed `latchkey migrate` arguments, or the usage error to print. */
export function parseMigrateArgs(
  argv: string[],
): { list: true } | { name: string; dryRun: boolean; namespaces: string[]; args: string[] } | { error: string } {
  if (argv.length === 1 && argv[0] === '--list') return { list: true };
  const [name, ...rest] = argv;
  if (!name || name.startsWith('-')) return { error: MIGRATE_USAGE };
  if (!MIGRATIONS.has(name)) return { error: `latchkey migrate: no migration named ${JSON.stringify(name)} (latchkey migrate --list)` };
  let dryRun = false;
  const namespaces: string[] = [];
  const args: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (a === '--dry-run') dryRun = true;
    else if (a === '--namespace' || a === '-n') {
      const namespace = rest[++i];
      if (!namespace) return { error: MIGRATE_USAGE };
      namespaces.push(namespace);
    } else if (a.startsWith('-')) return { error: `latchkey migrate: unknown option ${a}\n${MIGRATE_USAGE}` };
    else args.push(a);
  }
  return { name, dryRun, namespaces, args };
}

/** The lines `latchkey migrate --list` prints. */
export function migrationList(): string {
  return [...MIGRATIONS.values()]
    .map((m) => `${m.name}\t(since ${m.since})\t${m.summary}${m.args ? `\n    args: ${m.args}` : ''}`)
    .join('\n');
}

/** The report as printed: what changed (or would), then what needs a person. */
export function formatReport(r: MigrationReport): string {
  const lines = [`${r.migration}: ${r.dryRun ? 'would change' : 'changed'} ${r.changed.length} connection(s)`];
  for (const c of r.changed) lines.push(`  ${c}`);
  if (r.attention.length) {
    lines.push(`${r.attention.length} connection(s) left as they are, to act on:`);
    for (const a of r.attention) lines.push(`  ${a.connection}: ${a.reason}`);
  }
  return lines.join('\n');
}

/** `latchkey migrate`: runs one shipped migration against the cluster; exit code 0 when it ran. */
export async function migrateCommand(
  argv: string[],
  deps: { config: Config; logger: Logger; kc: KubeConfig; out: (s: string) => void },
): Promise<number> {
  const parsed = parseMigrateArgs(argv);
  if ('error' in parsed) {
    deps.out(`${parsed.error}\n`);
    return 2;
  }
  if ('list' in parsed) {
    deps.out(`${migrationList()}\n`);
    return 0;
  }
  const connections = new ConnectionRewrites(deps.kc);
  const oplog = parsed.dryRun
    ? undefined
    : createOperationLog({ config: deps.config, logger: deps.logger, kc: deps.kc, clock: systemClock, metrics: createRegistry() });
  try {
    const namespaces = parsed.namespaces.length ? parsed.namespaces : deps.config.watchNamespaces;
    const report = await runMigration(MIGRATIONS.get(parsed.name)!, { connections, oplog }, { ...parsed, namespaces });
    deps.out(`${formatReport(report)}\n`);
    return 0;
  } finally {
    await oplog?.stop();
    await connections.close();
  }
}
