/**
 * The memory benchmark's points measured against kine on Postgres (`BENCH_STORAGE=kine-postgres npm run
 * bench:memory`): stored under `memory.kinePostgres.connections[N]` of docs/benchmarks.json, never over
 * the etcd-backed points, with what Postgres holds per connection, and rendered as their own section of
 * docs/benchmarks.md beside the etcd-backed point of the same count.
 */
import type { KinePostgres } from '../dev/kine-postgres.js';
import { mergeFigures, readFigures } from './figures.js';
import { handNotes, machine, writeSection } from './support.js';

/** The figures of bench/memory.ts's Point this section shows (the point is stored whole). */
interface ShownPoint {
  date: string;
  commit?: string;
  loadAverageAtStart: number[];
  serverRssMiB: number;
  readySeconds: number;
  controllerRssMiB: number;
  controllerReadySeconds: number;
  controllersReconciled: number;
  controllersReconciledSeconds: number;
  fetchP99Ms: number;
  fetchPerSecond: number;
  fetchErrors: number;
  apiServerSecretReadP50Ms: number;
  apiServerSecretReadP99Ms: number;
}

interface KinePoint extends ShownPoint {
  storage: 'kine-postgres';
  /** Connections (a Connection and its Secret) created per second while filling up to this count. */
  fillPerSecond: number;
  /** pg_database_size of kine's database when measured, and its growth per connection since before the fill. */
  postgresDatabaseBytes: number;
  postgresBytesPerConnection: number;
  /** Rows of kine's table (every revision kept until compaction), and per connection. */
  kineRows: number;
  kineRowsPerConnection: number;
  /** Keys and values of the namespace's live objects per connection (etcd-bytes' measure); absent on points from before it was recorded. */
  postgresLiveBytesPerConnection?: number;
}

const PATH = ['memory', 'kinePostgres', 'connections'] as const;

export async function recordKinePostgresPoint(
  kine: KinePostgres,
  count: number,
  point: object,
  fill: { perSecond: number; baselineBytes: number; namespace: string },
): Promise<void> {
  const postgresDatabaseBytes = await kine.databaseBytes();
  const kineRows = await kine.rows();
  const liveBytes = await kine.liveBytes(fill.namespace);
  const figures = {
    ...point,
    storage: 'kine-postgres',
    fillPerSecond: Math.round(fill.perSecond * 10) / 10,
    postgresDatabaseBytes,
    postgresBytesPerConnection: Math.round((postgresDatabaseBytes - fill.baselineBytes) / count),
    kineRows,
    kineRowsPerConnection: Math.round((kineRows / count) * 100) / 100,
    postgresLiveBytesPerConnection: Math.round(liveBytes / count),
  };
  mergeFigures([...PATH, String(count)], figures);
  writeSection('memory-kine-postgres', renderKinePostgresSection());
}

const f1 = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(1));

export function renderKinePostgresSection(machineLines = machine()): string {
  const memory = (readFigures().memory ?? {}) as {
    connections?: Record<string, ShownPoint>;
    kinePostgres?: { connections?: Record<string, KinePoint> };
    etcdBytesPerConnection?: Record<string, { count: number; bytesPerConnection: number; dbInUsePerConnection: number }>;
  };
  const kine = memory.kinePostgres?.connections ?? {};
  const etcd = memory.connections ?? {};
  const counts = Object.keys(kine)
    .map(Number)
    .sort((a, b) => a - b);
  const etcdBytes = memory.etcdBytesPerConnection?.after ?? memory.etcdBytesPerConnection?.before;
  // Each kine point, then the etcd-backed point of the same count where there is one.
  const columns: Array<{ label: string; p: ShownPoint; kine?: KinePoint }> = counts.flatMap((n) => {
    const k = kine[String(n)]!;
    const e = etcd[String(n)];
    const label = n.toLocaleString('en-US');
    return [{ label: `kine/Postgres, ${label}`, p: k, kine: k }, ...(e ? [{ label: `etcd, ${label} (section above)`, p: e }] : [])];
  });
  const row = (label: string, value: (c: (typeof columns)[number]) => string) => `| ${label} | ${columns.map(value).join(' | ')} |`;
  return `## Scale past etcd: the memory benchmark on kine and Postgres

${machineLines.join('\n')}

\`BENCH_STORAGE=kine-postgres BENCH_MEMORY_COUNTS=N npm run bench:memory\`: the memory benchmark above, unchanged,
with kube-apiserver's \`--etcd-servers\` pointed at kine (\`dev/kine/\`, built from the Go module proxy) on a
throwaway Postgres cluster from Debian (\`dev/kine-postgres.ts\`: initdb into a temporary directory, loopback only,
fsync off like the tests' etcd). Postgres's size is \`pg_database_size\` of kine's database, its growth from before
the fill divided by the count; kine keeps every revision as a row until it compacts, so the rows per connection
say how much history it held when measured. etcd's bytes per connection are the etcd-bytes section's (its own
run, at its own count: half OAuth 2, half API-key connections; this benchmark's are all API-key).

| | ${columns.map((c) => c.label).join(' | ')} |
|---|${columns.map(() => '---:|').join('')}
${row('measured (UTC)', (c) => c.p.date.slice(0, 16).replace('T', ' '))}
${row('commit measured', (c) => (c.p.commit === undefined ? 'not recorded' : `\`${c.p.commit}\``))}
${row('load average at the start of the point', (c) => c.p.loadAverageAtStart.map((x) => x.toFixed(1)).join(' '))}
${row('fill: connections created per second (Connection + Secret, 32 in flight)', (c) => (c.kine ? f1(c.kine.fillPerSecond) : 'not recorded'))}
${row('**server RSS, MiB**', (c) => f1(c.p.serverRssMiB))}
${row('**server ready, s**', (c) => f1(c.p.readySeconds))}
${row('**controller RSS, MiB**, largest of 3', (c) => f1(c.p.controllerRssMiB))}
${row('controller ready, s, slowest of 3', (c) => f1(c.p.controllerReadySeconds))}
${row('controllers: shares reconciled (of all), s after ready', (c) => `${c.p.controllersReconciled} in ${f1(c.p.controllersReconciledSeconds)}`)}
${row('**fetch `GET /connections/{id}` p99, ms** (cached) / requests/s / errors', (c) => `${f1(c.p.fetchP99Ms)} / ${c.p.fetchPerSecond} / ${c.p.fetchErrors}`)}
${row('API server Secret read (a GET without resourceVersion), one in flight, p50 / p99 ms', (c) => `${f1(c.p.apiServerSecretReadP50Ms)} / ${f1(c.p.apiServerSecretReadP99Ms)}`)}
${row('**storage bytes per connection**: database growth (Postgres) / db in use (etcd)', (c) => (c.kine ? `${c.kine.postgresBytesPerConnection}` : etcdBytes ? `${etcdBytes.dbInUsePerConnection} (etcd-bytes, ${etcdBytes.count})` : '—'))}
${row('keys and values of the live objects per connection', (c) => (c.kine ? (c.kine.postgresLiveBytesPerConnection === undefined ? 'not recorded (notes)' : `${c.kine.postgresLiveBytesPerConnection}`) : etcdBytes ? `${etcdBytes.bytesPerConnection} (etcd-bytes, ${etcdBytes.count})` : '—'))}
${row('kine rows per connection when measured', (c) => (c.kine ? `${c.kine.kineRowsPerConnection} (${c.kine.kineRows} rows)` : '—'))}

${handNotes('memory-kine-postgres')}`;
}
