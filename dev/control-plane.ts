/**
 * A real Kubernetes control plane on loopback, for tests and local runs: etcd, kube-apiserver and
 * kube-controller-manager (garbage collection and namespace deletion), built from the Go module
 * proxy by dev/controlplane/build.sh and cached outside the repository.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'node:https';

const here = dirname(fileURLToPath(import.meta.url));
/** Repository root, from either dev/ (ts) or dist/dev/ (js). */
export const REPO_ROOT = existsSync(join(here, '../package.json')) ? resolve(here, '..') : resolve(here, '../..');

export interface ControlPlane {
  /** Path of an admin kubeconfig for this control plane. */
  kubeconfigPath: string;
  server: string;
  token: string;
  workDir: string;
  /** Stops kube-apiserver and starts it again on the same port (for watch-recovery tests). */
  restartApiServer(): Promise<void>;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Also start kube-controller-manager (garbage collector, namespace controller). Default true. */
  controllerManager?: boolean;
  log?: (line: string) => void;
}

export async function buildControlPlane(log: (line: string) => void = () => undefined): Promise<string> {
  const script = join(REPO_ROOT, 'dev/controlplane/build.sh');
  const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => d.toString().split('\n').filter(Boolean).forEach(log));
  const code: number = await new Promise((r) => child.on('close', (c) => r(c ?? 1)));
  if (code !== 0) throw new Error(`building the local control plane failed (exit ${code}); see the output above`);
  return out.trim().split('\n').pop()!;
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolvePort(port));
    });
  });
}

export async function startControlPlane(opts: StartOptions = {}): Promise<ControlPlane> {
  const log = opts.log ?? (() => undefined);
  const bin = await buildControlPlane(log);
  const workDir = mkdtempSync(join(tmpdir(), 'latchkey-cp-'));
  const token = randomBytes(24).toString('hex');
  const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const server = `https://127.0.0.1:${apiPort}`;

  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(join(workDir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
  writeFileSync(join(workDir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
  writeFileSync(join(workDir, 'tokens.csv'), `${token},admin,admin,system:masters\n`);
  const kubeconfigPath = join(workDir, 'kubeconfig');
  writeFileSync(kubeconfigPath, kubeconfig(server, token));
  mkdirSync(join(workDir, 'certs'));

  const children: ChildProcess[] = [];
  const startChild = (name: string, args: string[]): ChildProcess => {
    const logFile = createWriteStream(join(workDir, `${name}.log`), { flags: 'a' });
    const child = spawn(join(bin, name), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.pipe(logFile);
    child.stderr!.pipe(logFile);
    children.push(child);
    return child;
  };

  startChild('etcd', [
    '--name=default',
    `--data-dir=${join(workDir, 'etcd')}`,
    `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
    `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
    `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
    '--unsafe-no-fsync=true',
    '--log-level=warn',
  ]);

  const apiArgs = [
    `--etcd-servers=http://127.0.0.1:${etcdPort}`,
    `--secure-port=${apiPort}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--cert-dir=${join(workDir, 'certs')}`,
    `--token-auth-file=${join(workDir, 'tokens.csv')}`,
    '--authorization-mode=RBAC',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${join(workDir, 'sa.pub')}`,
    `--service-account-signing-key-file=${join(workDir, 'sa.key')}`,
    '--service-cluster-ip-range=10.96.0.0/24',
    '--allow-privileged=true',
    '--enable-priority-and-fairness=false',
    '--disable-admission-plugins=ServiceAccount',
    '--v=0',
  ];
  let apiServer = startChild('kube-apiserver', apiArgs);
  await waitReady(server, token, workDir);

  if (opts.controllerManager !== false) {
    startChild('kube-controller-manager', [
      `--kubeconfig=${kubeconfigPath}`,
      '--controllers=garbagecollector,namespace',
      '--leader-elect=false',
      '--secure-port=0',
      '--use-service-account-credentials=false',
      '--concurrent-gc-syncs=5',
      '--v=0',
    ]);
  }
  log(`control plane ready at ${server} (logs in ${workDir})`);

  const stopChild = async (child: ChildProcess) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };

  return {
    kubeconfigPath,
    server,
    token,
    workDir,
    async restartApiServer() {
      await stopChild(apiServer);
      children.splice(children.indexOf(apiServer), 1);
      apiServer = startChild('kube-apiserver', apiArgs);
      await waitReady(server, token, workDir);
    },
    async stop() {
      for (const child of [...children].reverse()) await stopChild(child);
      if (!process.env.LATCHKEY_KEEP_CONTROLPLANE_DIR) rmSync(workDir, { recursive: true, force: true });
    },
  };
}

function kubeconfig(server: string, token: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'latchkey-local', cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'admin', user: { token } }],
    contexts: [{ name: 'latchkey-local', context: { cluster: 'latchkey-local', user: 'admin', namespace: 'default' } }],
    'current-context': 'latchkey-local',
  });
}

async function waitReady(server: string, token: string, workDir: string, timeoutMs = 120_000): Promise<void> {
  const agent = new Agent({ rejectUnauthorized: false });
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const status = await new Promise<number>((res, rej) => {
        const req = request(`${server}/readyz`, { agent, headers: { authorization: `Bearer ${token}` }, timeout: 2000 }, (r) => {
          r.resume();
          res(r.statusCode ?? 0);
        });
        req.on('error', rej);
        req.on('timeout', () => req.destroy(new Error('timeout')));
        req.end();
      });
      if (status === 200) return;
      last = `readyz answered ${status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const tail = (name: string) => {
    try {
      return readFileSync(join(workDir, `${name}.log`), 'utf8')
        .split('\n')
        .slice(-20)
        .join('\n');
    } catch {
      return '';
    }
  };
  throw new Error(
    `kube-apiserver not ready after ${timeoutMs} ms (${last})\n--- etcd ---\n${tail('etcd')}\n--- kube-apiserver ---\n${tail('kube-apiserver')}`,
  );
}
