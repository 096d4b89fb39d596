/**
 * kine on a throwaway Postgres, on loopback: the storage of a control plane past etcd
 * (docs/operations.md, "Past etcd"). Postgres comes from Debian (`dev/kine/packages.sh`), kine from
 * the Go module proxy (`dev/kine/build.sh`, cached beside the control plane's binaries). The
 * database cluster lives in a temporary directory that stop() deletes; Postgres refuses to run as
 * root, so as root it runs as Debian's `postgres` user. Only the kine/Postgres benchmark uses this
 * (`BENCH_STORAGE=kine-postgres`), never the tests or CI.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, createWriteStream, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, stopChild } from './control-plane.js';
import { REPO_ROOT } from './repo-root.js';

const run = promisify(execFile);
/** The database kine creates and keeps its one table in. */
const DATABASE = 'kine';

export interface KinePostgres {
  /** kine's etcd API, for kube-apiserver's `--etcd-servers`. */
  etcdEndpoint: string;
  workDir: string;
  /** `pg_database_size` of kine's database, bytes. */
  databaseBytes(): Promise<number>;
  /** Rows of kine's table (every revision it keeps, not only the live keys). */
  rows(): Promise<number>;
  /** Bytes of the keys and values of one namespace's live objects (their latest revision): what etcd-bytes counts in etcd. */
  liveBytes(namespace: string): Promise<number>;
  stop(): Promise<void>;
}

/** Installs Postgres from Debian when missing (dev/kine/packages.sh), then finds its binaries. */
export function postgresBinDir(): string {
  execFileSync('bash', [join(REPO_ROOT, 'dev/kine/packages.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin/postgres')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) throw new Error(`no Postgres server under ${root} (Debian's postgresql package installs it there)`);
  return join(root, versions[0]!, 'bin');
}

/** Builds (or finds in the cache) kine's binary; returns its path. */
export function buildKine(log: (line: string) => void): string {
  log('building kine if needed (dev/kine/build.sh; the first build takes a few minutes)');
  const out = execFileSync('bash', [join(REPO_ROOT, 'dev/kine/build.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return out.trim().split('\n').pop()!;
}

export async function startKinePostgres(opts: { log?: (line: string) => void } = {}): Promise<KinePostgres> {
  const log = opts.log ?? (() => undefined);
  const bin = postgresBinDir();
  const kine = buildKine(log);
  const workDir = mkdtempSync(join(tmpdir(), 'latchkey-kine-'));
  const dataDir = join(workDir, 'pgdata');
  // Postgres will not run as root: as root, the cluster belongs to Debian's postgres user.
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot
    ? {
        uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
        gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
      }
    : undefined;
  if (owner) chownSync(workDir, owner.uid, owner.gid);
  const asOwner = (file: string, args: string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];

  const pgPort = await freePort();
  const kinePort = await freePort();
  // Throwaway data, as the tests' etcd (--unsafe-no-fsync): no fsync, trusted loopback connections only.
  await run(...asOwner(join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-sync']));
  const children: ChildProcess[] = [];
  const startChild = (name: string, [file, args]: [string, string[]]) => {
    const logFile = createWriteStream(join(workDir, `${name}.log`), { flags: 'a' });
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.pipe(logFile);
    child.stderr!.pipe(logFile);
    children.push(child);
    return child;
  };
  startChild(
    'postgres',
    asOwner(join(bin, 'postgres'), [
      '-D',
      dataDir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-p',
      String(pgPort),
      '-c',
      `unix_socket_directories=${workDir}`,
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'max_connections=200',
    ]),
  );
  const psqlArgs = ['-h', '127.0.0.1', '-p', String(pgPort), '-U', 'postgres', '-At'];
  await waitFor(`Postgres on 127.0.0.1:${pgPort}`, workDir, 'postgres', async () => {
    await run(join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(pgPort)]);
  });

  startChild('kine', [
    kine,
    [
      `--listen-address=127.0.0.1:${kinePort}`,
      `--endpoint=postgres://postgres@127.0.0.1:${pgPort}/${DATABASE}?sslmode=disable`,
      // Below Postgres's max_connections, with room for psql.
      '--datastore-max-open-connections=100',
      // Its default is :8080 on every address.
      '--metrics-bind-address=0',
    ],
  ]);
  const etcdEndpoint = `http://127.0.0.1:${kinePort}`;
  // kine creates its database and table before it listens (gRPC only: a TCP connect is the probe).
  await waitFor(`kine on ${etcdEndpoint}`, workDir, 'kine', () => tcpConnect(kinePort));
  log(`kine on ${etcdEndpoint}, Postgres on 127.0.0.1:${pgPort} (logs in ${workDir})`);

  const query = async (sql: string) => Number((await run(join(bin, 'psql'), [...psqlArgs, '-d', DATABASE, '-c', sql])).stdout.trim());
  return {
    etcdEndpoint,
    workDir,
    databaseBytes: () => query(`SELECT pg_database_size('${DATABASE}')`),
    rows: () => query('SELECT count(*) FROM kine'),
    liveBytes(namespace: string) {
      if (!/^[a-z0-9-]+$/.test(namespace)) throw new Error('not a namespace name');
      return query(
        `WITH latest AS (SELECT DISTINCT ON (name) name, deleted, value FROM kine WHERE name LIKE '/registry/%/${namespace}/%' ORDER BY name, id DESC) ` +
          'SELECT coalesce(sum(octet_length(name) + octet_length(value)), 0) FROM latest WHERE deleted = 0',
      );
    },
    async stop() {
      for (const child of [...children].reverse()) await stopChild(child);
      if (!process.env.LATCHKEY_KEEP_CONTROLPLANE_DIR) rmSync(workDir, { recursive: true, force: true });
    },
  };
}

function tcpConnect(port: number): Promise<void> {
  return new Promise((resolveConnect, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolveConnect();
    });
    socket.on('error', reject);
  });
}

async function waitFor(what: string, workDir: string, logName: string, probe: () => Promise<void>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      await probe();
      return;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} not ready after ${timeoutMs} ms (${last}); see ${join(workDir, `${logName}.log`)}`);
}
