/**
 * What one connection costs in etcd. On a fresh local control plane: N connections created with
 * KubeStore.createConnection as a server replica makes them (Connection, then its credentials Secret
 * owned by it; no status write, the server derives it until the controller writes it), half an
 * imported OAuth 2 connection with a refresh token, half an API-key one; then one controller replica
 * (its own process, bench/replica-process.ts) takes its shard (the shard label on both objects) and
 * writes every Connection's status as it does for real. Then etcd's own figures: the stored value of
 * every key under the namespace (read through etcd's gRPC gateway, `POST /v3/kv/range`), per kind of
 * object, and etcd's `etcd_mvcc_db_total_size_in_use_in_bytes` before and after. Per part (managedFields,
 * labels, annotations, ownerReferences, status, spec, data): the bytes of that part in the object as the
 * API server answers it in JSON (Connections are stored in JSON; Secrets in protobuf, where field names
 * are not repeated, so their parts are shown as JSON bytes next to the stored total).
 *
 *   npm run bench:etcd-bytes                       # 2,000 connections
 *   BENCH_ETCD_BYTES_COUNT=500 npm run bench:etcd-bytes
 *   BENCH_ETCD_BYTES_LABEL=after npm run bench:etcd-bytes   # which key of memory.etcdBytesPerConnection it writes
 *   BENCH_ETCD_BYTES_RENDER_ONLY=1 node dist/bench/etcd-bytes.js   # the Markdown section again from docs/benchmarks.json
 *   BENCH_ETCD_BYTES_DUMP=1 ...                    # also logs one Connection and its Secret's metadata of each kind
 */
import { etcdClientUrl } from './etcd-metrics.js';
import { randomBytes } from 'node:crypto';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { connectionObjectName } from '../src/k8s/names.js';
import { CONNECTIONS, GROUP, VERSION, type ConnectionResource } from '../src/k8s/resources.js';
import { KubeStore, type NewConnection, type StoredCredentials } from '../src/k8s/store.js';
import { statusAfterNewCredentials } from '../src/domain/connection-state.js';
import { loadConfig } from '../src/platform/config.js';
import { createLogger } from '../src/platform/log.js';
import { createTestNamespace } from '../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration } from '../dev/fixtures.js';
import { mergeFigures, readFigures } from './figures.js';
import { metricSum, startReplica } from './replica-process.js';
import { apiKeyProvider, handNotes, machine, runLoad, sourceCommit, writeSection, startBenchControlPlane } from './support.js';

const COUNT = Number(process.env.BENCH_ETCD_BYTES_COUNT ?? 2000);
const LABEL = process.env.BENCH_ETCD_BYTES_LABEL ?? 'before';
const CONCURRENCY = 16;
const MAX_SECONDS = Number(process.env.BENCH_ETCD_BYTES_MAX_SECONDS ?? 900);
const OAUTH = 'oauth';
const KEYS = 'keys';

const log = (l: string) => process.stderr.write(`[etcd-bytes ${new Date().toISOString().slice(11, 19)}] ${l}\n`);

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

/** Every key under `prefix` and its stored value's size, paged through etcd's gRPC gateway. */
async function etcdValues(url: string, prefix: string): Promise<Array<{ key: string; bytes: number }>> {
  const end = Buffer.from(prefix);
  end[end.length - 1]!++;
  const out: Array<{ key: string; bytes: number }> = [];
  let from = Buffer.from(prefix);
  for (;;) {
    const res = await fetch(`${url}/v3/kv/range`, {
      method: 'POST',
      body: JSON.stringify({ key: b64(from), range_end: b64(end), limit: 500 }),
    });
    const body = (await res.json()) as { kvs?: Array<{ key: string; value?: string }>; more?: boolean };
    for (const kv of body.kvs ?? [])
      out.push({ key: Buffer.from(kv.key, 'base64').toString(), bytes: Buffer.from(kv.value ?? '', 'base64').length });
    if (!body.more || !body.kvs?.length) return out;
    from = Buffer.concat([Buffer.from(body.kvs.at(-1)!.key, 'base64'), Buffer.from([0])]);
  }
}

async function dbInUse(url: string): Promise<number> {
  return metricSum(await (await fetch(`${url}/metrics`)).text(), 'etcd_mvcc_db_total_size_in_use_in_bytes');
}

/** A connection as an import makes it: OAuth 2 with a refresh token (even i) or an API key (odd i). */
function connectionInput(namespace: string, i: number): NewConnection {
  const oauth = i % 2 === 0;
  let credentials: StoredCredentials;
  if (oauth) {
    const accessToken = randomBytes(135).toString('base64url');
    const refreshToken = randomBytes(75).toString('base64url');
    credentials = {
      type: 'OAUTH2',
      access_token: accessToken,
      refresh_token: refreshToken,
      expires_at: new Date(Date.now() + 3600_000).toISOString(),
      raw: {
        access_token: accessToken,
        refresh_token: refreshToken,
        token_type: 'Bearer',
        expires_in: 3600,
        scope: 'openid offline_access read write',
      },
    };
  } else {
    credentials = { type: 'API_KEY', apiKey: `sk_live_${randomBytes(24).toString('hex')}` };
  }
  return {
    namespace,
    spec: {
      integration: oauth ? OAUTH : KEYS,
      provider: `etcd-bytes-${oauth ? OAUTH : KEYS}`,
      connectionId: `conn-${String(i).padStart(7, '0')}`,
      authMode: oauth ? 'OAUTH2' : 'API_KEY',
      endUser: { id: `user-${i}`, email: `user-${i}@example.test`, displayName: `User ${i}` },
      metadata: { plan: 'pro' },
      connectionConfig: {},
    },
    credentials,
  };
}

type Kind = 'connection' | 'secret';

const size = (v: unknown) => (v === undefined ? 0 : Buffer.byteLength(JSON.stringify(v)));

/** The bytes of each part of an object as JSON (whole object = `json`). */
function parts(o: { metadata?: Record<string, unknown>; [k: string]: unknown }, kind: Kind): Record<string, number> {
  const m = o.metadata ?? {};
  const r: Record<string, number> = {
    json: size(o),
    managedFields: size(m.managedFields),
    labels: size(m.labels),
    annotations: size(m.annotations),
    ownerReferences: size(m.ownerReferences),
  };
  if (kind === 'connection') {
    r.spec = size(o.spec);
    r.status = size(o.status);
  } else r.data = size(o.data);
  r.otherMetadata = size({ ...m, managedFields: undefined, labels: undefined, annotations: undefined, ownerReferences: undefined });
  return r;
}

function average(rows: Array<Record<string, number>>): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const r of rows) for (const [k, v] of Object.entries(r)) sum[k] = (sum[k] ?? 0) + v;
  return Object.fromEntries(Object.entries(sum).map(([k, v]) => [k, Math.round(v / Math.max(1, rows.length))]));
}

async function main(): Promise<void> {
  const MACHINE = machine();
  if (process.env.BENCH_ETCD_BYTES_RENDER_ONLY === '1') {
    // The section again from docs/benchmarks.json (after a change of this text), nothing measured.
    writeSection('etcd-bytes', render(MACHINE.filter((l) => !l.includes('Load average') && !l.includes('Date:'))));
    return;
  }
  const { cp, kc } = await startBenchControlPlane(new KubeConfig());
  const url = etcdClientUrl(cp.workDir);
  const ns = await createTestNamespace(kc, 'bench-etcd');
  const logger = createLogger('silent');
  const config = loadConfig({});
  const custom = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  let controller: Awaited<ReturnType<typeof startReplica>> | undefined;
  try {
    await applyProvider(kc, `etcd-bytes-${KEYS}`, apiKeyProvider('Bench keys'));
    await applyProvider(kc, `etcd-bytes-${OAUTH}`, {
      displayName: 'Bench OAuth',
      authMode: 'OAUTH2',
      authorizationUrl: 'https://auth.example.com/authorize',
      tokenUrl: 'https://auth.example.com/token',
      defaultScopes: ['read', 'write'],
      proxy: { baseUrl: 'https://api.example.com' },
    });
    await createEnvironment(kc, ns.name);
    await createIntegration(kc, ns.name, KEYS, { provider: `etcd-bytes-${KEYS}` });
    await createIntegration(kc, ns.name, OAUTH, { provider: `etcd-bytes-${OAUTH}` }, { clientId: 'bench', clientSecret: 'bench-secret' });
    // As a server replica writes them (src/app/context.ts: the status is derived until the controller writes it).
    const store = new KubeStore(kc, {
      namespaces: [ns.name],
      logger,
      deriveStatus: (_r: ConnectionResource, c: StoredCredentials) =>
        statusAfterNewCredentials(undefined, c, config, Date.now(), 'authorized'),
    });
    const before = await dbInUse(url);
    log(`creating ${COUNT} connections`);
    const created = await runLoad({
      count: COUNT,
      concurrency: CONCURRENCY,
      maxSeconds: MAX_SECONDS,
      op: async (i) => {
        await store.connections.createConnection(connectionInput(ns.name, i));
      },
      onFirstError: (err) => log(`create failed: ${(err as Error).message}`),
    });
    if (created.errors || created.count !== COUNT) throw new Error(`created ${created.count} of ${COUNT} (${created.errors} errors)`);
    log(`created in ${created.seconds.toFixed(0)} s; starting a controller`);
    controller = await startReplica({
      kind: 'controller',
      identity: 'bench-controller-0',
      kubeconfigPath: cp.kubeconfigPath,
      namespace: ns.name,
      waitSeconds: 300,
    });
    const deadline = Date.now() + MAX_SECONDS * 1000;
    for (;;) {
      const page = await controller.metrics();
      const reconciled = metricSum(page, 'latchkey_connections', 'condition="Ready"');
      const depth = metricSum(page, 'latchkey_workqueue_depth');
      if ((reconciled >= COUNT && depth === 0) || Date.now() > deadline) {
        log(`controller reconciled ${reconciled}, queue ${depth}`);
        break;
      }
      await new Promise((r) => setTimeout(r, 3000));
    }
    // Every Connection carries the controller's status (else the figures are not a connection's in use).
    const withStatus = await etcdValues(url, `/registry/${GROUP}/${CONNECTIONS.plural}/${ns.name}/`);
    await controller.stop();
    controller = undefined;
    const after = await dbInUse(url);

    // etcd's own figures, per kind of object stored in the namespace.
    const kinds: Record<string, string> = {
      connection: `/registry/${GROUP}/${CONNECTIONS.plural}/${ns.name}/`,
      secret: `/registry/secrets/${ns.name}/`,
      lease: `/registry/leases/${ns.name}/`,
      event: `/registry/events/${ns.name}/`,
      configmap: `/registry/configmaps/${ns.name}/`,
    };
    const names = new Set(
      Array.from({ length: COUNT }, (_, i) => connectionObjectName(i % 2 ? KEYS : OAUTH, `conn-${String(i).padStart(7, '0')}`)),
    );
    const stored: Record<string, { keys: number; keyBytes: number; valueBytes: number }> = {};
    for (const [kind, prefix] of Object.entries(kinds)) {
      const kvs = await etcdValues(url, prefix);
      // Secrets: only the connections' (not the Environment's or the Integration's); the rest: all of them.
      const mine = kind === 'connection' || kind === 'secret' ? kvs.filter((kv) => names.has(kv.key.slice(prefix.length))) : kvs;
      stored[kind] = {
        keys: mine.length,
        keyBytes: mine.reduce((n, kv) => n + Buffer.byteLength(kv.key), 0),
        valueBytes: mine.reduce((n, kv) => n + kv.bytes, 0),
      };
    }
    const perConnection = Object.values(stored).reduce((n, s) => n + s.keyBytes + s.valueBytes, 0) / COUNT;

    // Parts, from a sample of each kind as the API server answers in JSON.
    const sample = Array.from({ length: 100 }, (_, j) => Math.floor((j * COUNT) / 100));
    const byKind: Record<string, Record<string, Record<string, number>>> = { oauth: {}, apiKey: {} };
    for (const [mode, pick] of [
      ['oauth', (i: number) => i % 2 === 0],
      ['apiKey', (i: number) => i % 2 === 1],
    ] as const) {
      const rows: Record<Kind, Array<Record<string, number>>> = { connection: [], secret: [] };
      for (const i of sample.map((i) => (pick(i) ? i : i + 1)).filter((i) => i < COUNT)) {
        const name = connectionObjectName(i % 2 ? KEYS : OAUTH, `conn-${String(i).padStart(7, '0')}`);
        const c = (await custom.getNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace: ns.name,
          plural: CONNECTIONS.plural,
          name,
        })) as ConnectionResource;
        const s = await core.readNamespacedSecret({ namespace: ns.name, name });
        if (process.env.BENCH_ETCD_BYTES_DUMP && rows.connection.length === 0)
          log(JSON.stringify({ connection: c, secret: { ...s, data: '(left out)' } }, null, 1));
        rows.connection.push(parts(c as never, 'connection'));
        rows.secret.push(parts(s as never, 'secret'));
      }
      byKind[mode] = { connection: average(rows.connection), secret: average(rows.secret) };
    }
    const figures = {
      count: COUNT,
      bytesPerConnection: Math.round(perConnection),
      stored: Object.fromEntries(
        Object.entries(stored).map(([k, s]) => [k, { ...s, perConnection: Math.round((s.keyBytes + s.valueBytes) / COUNT) }]),
      ),
      dbInUseBefore: before,
      dbInUseAfter: after,
      dbInUsePerConnection: Math.round((after - before) / COUNT),
      connectionsWithStatus: withStatus.length,
      partsJson: byKind,
      sourceCommit: sourceCommit(),
    };
    process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
    mergeFigures(['memory', 'etcdBytesPerConnection', LABEL], figures);
    writeSection('etcd-bytes', render(MACHINE));
  } finally {
    await controller?.stop().catch(() => undefined);
    await ns.delete().catch(() => undefined);
    await cp.stop();
  }
}

type Figures = {
  count: number;
  bytesPerConnection: number;
  stored: Record<string, { keys: number; keyBytes: number; valueBytes: number; perConnection: number }>;
  dbInUsePerConnection: number;
  partsJson: Record<string, Record<string, Record<string, number>>>;
  date: string;
  loadAverage: number[];
};

/** The section from every run in docs/benchmarks.json (before, after, ...). */
function render(machineLines: string[]): string {
  const runs = ((readFigures().memory as { etcdBytesPerConnection?: Record<string, Figures> })?.etcdBytesPerConnection ?? {}) as Record<
    string,
    Figures
  >;
  const lines = [
    '## etcd bytes per connection',
    '',
    '`npm run bench:etcd-bytes` (`BENCH_ETCD_BYTES_COUNT`, default 2,000; `BENCH_ETCD_BYTES_LABEL` names the run): connections',
    'created as a server replica creates them (half OAuth 2 with a refresh token, half API key), their status written by a',
    "controller replica, then etcd's own figures: the keys and stored values under the namespace (etcd's gRPC gateway,",
    '`/v3/kv/range`), and `etcd_mvcc_db_total_size_in_use_in_bytes` before and after (it also holds revisions not yet compacted).',
    '',
    '| run | date | load average | bytes per connection (keys + values) | Connection | Secret | other objects | db in use per connection |',
    '|---|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const [label, f] of Object.entries(runs)) {
    const other = Object.entries(f.stored)
      .filter(([k]) => k !== 'connection' && k !== 'secret')
      .reduce((n, [, s]) => n + s.perConnection, 0);
    lines.push(
      `| ${label} (${f.count}) | ${f.date.slice(0, 10)} | ${f.loadAverage.map((l) => l.toFixed(2)).join(' ')} | ${f.bytesPerConnection} | ${f.stored.connection!.perConnection} | ${f.stored.secret!.perConnection} | ${other} | ${f.dbInUsePerConnection} |`,
    );
  }
  lines.push(
    '',
    'Parts, JSON bytes as the API server answers (mean of 100 of each kind, after the controller wrote the status; Secrets are stored in protobuf, smaller than their JSON):',
    '',
  );
  const partNames = ['json', 'managedFields', 'labels', 'annotations', 'ownerReferences', 'otherMetadata', 'spec', 'status', 'data'];
  lines.push(`| run | object | ${partNames.join(' | ')} |`, `|---|---|${partNames.map(() => '---:').join('|')}|`);
  for (const [label, f] of Object.entries(runs))
    for (const [mode, objects] of Object.entries(f.partsJson))
      for (const [kind, p] of Object.entries(objects))
        lines.push(`| ${label} | ${mode} ${kind} | ${partNames.map((n) => (p[n] === undefined ? '—' : String(p[n]))).join(' | ')} |`);
  const notes = handNotes('etcd-bytes');
  lines.push('', ...machineLines, ...(notes ? ['', notes] : []));
  return lines.join('\n');
}

await main();
