/**
 * The operation log at 100,000 entries: what it costs in etcd (bytes per entry, objects per
 * connection) and in a replica's memory, and that retention bounds both. Writes entries through
 * the real OperationLog and OplogStore to a real control plane, spread over many connections
 * (each a real Connection object, the owner of its log) plus the environment's ring; then moves the
 * clock past the retention age and writes one more entry per connection to show the trim. Also
 * times the reads the REST API makes. Bounded in count and time; the namespace is deleted at the end.
 *
 *   npm run bench:oplog                                    # rewrites the oplog section of docs/benchmarks.md
 *   BENCH_OPLOG_ENTRIES=20000 BENCH_OPLOG_CONNECTIONS=200 npm run bench:oplog
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { createTestNamespace } from '../dev/cluster.js';
import { createEnvironment } from '../dev/fixtures.js';
import { createLogger } from '../src/platform/log.js';
import { loadConfig } from '../src/platform/config.js';
import { createOperationLog } from '../src/app/context.js';
import { oplogReader } from '../src/k8s/oplog-store.js';
import { createRegistry } from '../src/platform/metrics.js';
import { connectionObjectName } from '../src/k8s/names.js';
import { CONNECTIONS, GROUP, VERSION } from '../src/k8s/resources.js';
import { machine, mib, ms, writeSection, startBenchControlPlane } from './support.js';

const ENTRIES = Math.min(Number(process.env.BENCH_OPLOG_ENTRIES ?? 100_000), 200_000);
const CONNECTIONS_N = Math.min(Number(process.env.BENCH_OPLOG_CONNECTIONS ?? 1000), 5000);
/** Share of entries without a connection (failed first authorizations): they go to the ring. */
const RING_SHARE = 0.05;
/** Entries recorded per connection between two flushes (the recorder writes one batch per object). */
const BATCH = Number(process.env.BENCH_OPLOG_BATCH ?? 10);
const MAX_SECONDS = Number(process.env.BENCH_OPLOG_MAX_SECONDS ?? 900);
const INTEGRATION = 'bench-oplog';
const DAY = 86_400_000;
const MACHINE = machine();

function heapMiB(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i++) gc?.();
  return process.memoryUsage().heapUsed;
}

/** Messages shaped like a refresh failure with the provider's answer (about 250 bytes). */
function messages(i: number): string[] {
  return [
    `Token refresh failed (reauthorization required): the provider refused the refresh token (invalid_grant) #${i}`,
    `Provider answered HTTP 400: invalid_grant - grant request is invalid; refresh_token=${randomBytes(24).toString('base64url')}`,
  ];
}

async function main(): Promise<void> {
  const started = performance.now();
  const { cp, kc } = await startBenchControlPlane(new KubeConfig());
  const ns = await createTestNamespace(kc, 'bench-oplog');
  try {
    await createEnvironment(kc, ns.name);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const conns: Array<{ name: string; uid: string; id: string }> = [];
    for (let i = 0; i < CONNECTIONS_N; i += 32) {
      const made = await Promise.all(
        Array.from({ length: Math.min(32, CONNECTIONS_N - i) }, async (_, k) => {
          const id = `user-${i + k}`;
          const name = connectionObjectName(INTEGRATION, id);
          const body = {
            apiVersion: `${GROUP}/${VERSION}`,
            kind: CONNECTIONS.kind,
            metadata: { name },
            spec: { integration: INTEGRATION, provider: 'bench', connectionId: id, id: i + k + 1, authMode: 'OAUTH2' },
          };
          const c = (await custom.createNamespacedCustomObject({
            group: GROUP,
            version: VERSION,
            namespace: ns.name,
            plural: CONNECTIONS.plural,
            body,
          })) as {
            metadata: { uid: string };
          };
          return { name, uid: c.metadata.uid, id };
        }),
      );
      conns.push(...made);
    }

    let offset = 0;
    const clock = { now: () => Date.now() + offset };
    const config = loadConfig({ LATCHKEY_LOG_LEVEL: 'silent' });
    const metrics = createRegistry();
    // Storage failures are warnings on stderr (the entry is in stdout only) and counted below.
    const oplog = createOperationLog({ config, logger: createLogger('warn', {}, process.stderr), kc, clock, metrics });
    const dropped = async () =>
      ((await metrics.getSingleMetric('latchkey_oplog_dropped_total')?.get())?.values ?? [])
        .map((v) => `${v.labels.reason}: ${v.value}`)
        .join(', ') || 'none';
    const reader = oplogReader({ oplog })!;
    const heapBefore = heapMiB();

    const ringEntries = Math.round(ENTRIES * RING_SHARE);
    const perConnection = Math.floor((ENTRIES - ringEntries) / CONNECTIONS_N);
    let written = 0;
    let writes = 0;
    const writeStart = performance.now();
    for (let round = 0; round * BATCH < perConnection; round++) {
      if ((performance.now() - started) / 1000 > MAX_SECONDS) break;
      const n = Math.min(BATCH, perConnection - round * BATCH);
      for (const c of conns) {
        for (let k = 0; k < n; k++) {
          oplog.record({
            namespace: ns.name,
            operation: 'refresh',
            step: 'schedule',
            outcome: 'failure',
            integration: INTEGRATION,
            connectionId: c.id,
            connection: { name: c.name, uid: c.uid },
            endUserId: c.id,
            durationMs: 120,
            messages: messages(written),
          });
          written++;
        }
        writes++;
      }
      const ringN = Math.round((ringEntries * n) / perConnection);
      for (let k = 0; k < ringN; k++) {
        oplog.record({
          namespace: ns.name,
          operation: 'authorization',
          step: 'callback',
          outcome: 'failure',
          integration: INTEGRATION,
          messages: messages(written),
        });
        written++;
      }
      writes++;
      await oplog.flush();
    }
    const writeMs = performance.now() - writeStart;
    const heapAfterWrites = heapMiB();

    const stored = await reader.objects(ns.name);
    const sum = (xs: typeof stored) => ({
      objects: xs.length,
      bytes: xs.reduce((n, o) => n + o.bytes, 0),
      entries: xs.reduce((n, o) => n + o.entries, 0),
    });
    const fresh = sum(stored);
    const ring = stored.find((o) => o.name.endsWith('-environment'));

    // Reads as the REST API makes them.
    const t = (f: () => Promise<unknown>) => async () => {
      const a = performance.now();
      await f();
      return performance.now() - a;
    };
    const byId = await t(() => reader.search(ns.name, { integration: INTEGRATION, connectionId: conns[7]!.id, limit: 50 }))();
    const all = await t(() => reader.search(ns.name, { outcome: 'failure', limit: 50 }))();
    const heapAfterSearch = heapMiB();

    // Eight days later: one more entry per connection trims each log to the newest 50.
    offset = 8 * DAY;
    for (const c of conns) {
      oplog.record({
        namespace: ns.name,
        operation: 'refresh',
        outcome: 'success',
        connection: { name: c.name, uid: c.uid },
        messages: ['Token refreshed'],
      });
    }
    await oplog.flush();
    const aged = sum(await reader.objects(ns.name));
    await oplog.stop();

    const perEntry = fresh.bytes / fresh.entries;
    const lines = [
      '## Operation log at 100,000 entries (`npm run bench:oplog`, `bench/oplog.ts`)',
      '',
      ...MACHINE,
      '',
      `${written.toLocaleString('en')} entries recorded through \`OperationLog\` into a real API server: ${CONNECTIONS_N.toLocaleString('en')} connections ` +
        `(${perConnection} entries each, a refresh failure with the provider's answer, about 250 bytes of messages) and ${ringEntries.toLocaleString('en')} ` +
        `without a connection (the environment's ring). ${BATCH} entries per connection per flush, 8 objects written at a time; default retention ` +
        `(\`LATCHKEY_OPLOG_KEEP_ENTRIES=50\`, \`LATCHKEY_OPLOG_KEEP_DAYS=7\`, \`LATCHKEY_OPLOG_MAX_ENTRIES=200\`, \`LATCHKEY_OPLOG_ENVIRONMENT_ENTRIES=500\`).`,
      '',
      '| | objects | objects per connection | entries kept | stored bytes | bytes per entry |',
      '|---|---|---|---|---|---|',
      `| after writing (all younger than 7 days) | ${fresh.objects} | ${((fresh.objects - (ring ? 1 : 0)) / CONNECTIONS_N).toFixed(2)} (+1 ring) | ${fresh.entries.toLocaleString('en')} | ${mib(fresh.bytes)} | ${perEntry.toFixed(0)} |`,
      `| 8 days later, one more entry each | ${aged.objects} | ${((aged.objects - (ring ? 1 : 0)) / CONNECTIONS_N).toFixed(2)} (+1 ring) | ${aged.entries.toLocaleString('en')} | ${mib(aged.bytes)} | ${(aged.bytes / aged.entries).toFixed(0)} |`,
      '',
      `- The ring kept ${ring?.entries ?? 0} of ${ringEntries.toLocaleString('en')} entries (${mib(ring?.bytes ?? 0)}).`,
      `- Upper bound per connection with the defaults: 200 entries × ~${perEntry.toFixed(0)} bytes ≈ ${mib(200 * perEntry)} (and never above 900 KiB, the per-object byte cap).`,
      `- Entries not stored (logged to stdout only, \`latchkey_oplog_dropped_total\`): ${await dropped()}.`,
      `- Writing: ${writes.toLocaleString('en')} object writes in ${(writeMs / 1000).toFixed(1)} s (${((written / writeMs) * 1000).toFixed(0)} entries/s, ${((writes / writeMs) * 1000).toFixed(0)} object writes/s).`,
      `- Reads: one connection's log (its object and the ring) ${ms(byId)}; a search over the whole namespace (every log object listed from the API server) ${ms(all)}.`,
      `- Heap of the writing process (after GC): ${mib(heapBefore)} before, ${mib(heapAfterWrites)} after writing, ${mib(heapAfterSearch)} after the whole-namespace search — entries are not cached, so a replica's memory does not grow with the log.`,
      '',
    ];
    writeSection('oplog', lines.join('\n'));
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    await ns.delete();
    await cp.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
