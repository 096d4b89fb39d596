/**
 * A real Kubernetes control plane on loopback, for tests and local runs: etcd, kube-apiserver and
 * kube-controller-manager (garbage collection and namespace deletion), built from the Go module
 * proxy by dev/controlplane/build.sh and cached outside the repository. Tests get a fresh temporary
 * directory each time; `npm start` passes a data directory that keeps etcd's data, the certificates,
 * the ports and the admin token across restarts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'node:https';
import { buildControlPlane } from './control-plane-build.js';

export { REPO_ROOT } from './repo-root.js';
export { buildControlPlane };

export interface ControlPlane {
  /** Path of an admin kubeconfig for this control plane. */
  kubeconfigPath: string;
  server: string;
  token: string;
  workDir: string;
  /** Stops kube-apiserver and starts it again on the same port (for watch-recovery tests). */
  restartApiServer(): Promise<void>;
  /** Stops kube-apiserver (SIGTERM, SIGKILL after 5 s); {@link startApiServer} starts it again on the same port. */
  stopApiServer(): Promise<void>;
  /** Starts a stopped kube-apiserver and waits until it answers /readyz. */
  startApiServer(): Promise<void>;
  /** Stops etcd (its data stays); {@link startEtcd} starts it again on the same ports and data. */
  stopEtcd(): Promise<void>;
  /** Starts a stopped etcd and waits until kube-apiserver answers /readyz again. */
  startEtcd(): Promise<void>;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Also start kube-controller-manager (garbage collector, namespace controller). Default true. */
  controllerManager?: boolean;
  log?: (line: string) => void;
  /**
   * Keep everything here across restarts (etcd data, certificates, ports, admin token) instead of a
   * temporary directory that stop() deletes. The processes then run in their own process group, so
   * that a Ctrl-C in the terminal reaches only the launcher, which stops Latchkey before them.
   */
  dataDir?: string;
  /** Serve pods on a local node (dev/local-node.ts): see {@link NodeFacingOptions}. */
  node?: NodeFacingOptions;
  /**
   * An etcd API already running (kine on Postgres: dev/kine-postgres.ts) for kube-apiserver's
   * `--etcd-servers`; no etcd is started then, and stopEtcd/startEtcd refuse.
   */
  etcdServers?: string;
}

/**
 * What a control plane needs for pods to run: the API server on the node's address (pods reach it
 * through the `kubernetes` Service, which points at the advertised address), client certificates for
 * the kubelet (`kubectl logs`/`exec`), ServiceAccount admission and the controllers a Deployment, a
 * Service and a Job need.
 */
export interface NodeFacingOptions {
  /** The node's address (kubelet refuses loopback): the API server binds and advertises it. */
  address: string;
  kubeletClientCertFile: string;
  kubeletClientKeyFile: string;
}

/** kube-controller-manager's controllers for pods on a node, beyond garbage collection and namespaces. */
const NODE_CONTROLLERS = [
  'deployment',
  'replicaset',
  'endpointslice',
  'serviceaccount',
  'root-ca-certificate-publisher-controller',
  'disruption',
  'podgc',
  // Helm hook Jobs (the chart's migrations, `migrations.enabled`): the Job's pod, and its status Helm waits for.
  'job',
  // Lifts the not-ready taint kubelet registers the node with, once the node is Ready.
  'node-lifecycle-controller',
];

/** What a data directory remembers between runs. */
interface SavedState {
  token: string;
  etcdPort: number;
  peerPort: number;
  apiPort: number;
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

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const srv = createServer();
    srv.once('error', () => resolveFree(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolveFree(true)));
  });
}

export async function startControlPlane(opts: StartOptions = {}): Promise<ControlPlane> {
  const log = opts.log ?? (() => undefined);
  const bin = await buildControlPlane(log);
  const persistent = opts.dataDir !== undefined;
  const workDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'latchkey-cp-'));
  mkdirSync(join(workDir, 'certs'), { recursive: true, mode: 0o700 });
  const statePath = join(workDir, 'state.json');
  const saved = persistent && existsSync(statePath) ? (JSON.parse(readFileSync(statePath, 'utf8')) as SavedState) : undefined;
  const state: SavedState = saved ?? {
    token: randomBytes(24).toString('hex'),
    etcdPort: await freePort(),
    peerPort: await freePort(),
    apiPort: await freePort(),
  };
  if (saved) {
    // etcd keeps its peer address in its data, and users keep the kubeconfig: same ports every run.
    for (const port of [state.etcdPort, state.peerPort, state.apiPort]) {
      if (!(await portIsFree(port))) {
        throw new Error(
          `port ${port} of the local control plane in ${workDir} is in use: is another \`npm start\` running? Stop it, or start afresh with \`npm start -- --reset\``,
        );
      }
    }
  }
  const { token, etcdPort, peerPort, apiPort } = state;
  const address = opts.node?.address ?? '127.0.0.1';
  const server = `https://${address}:${apiPort}`;

  if (!existsSync(join(workDir, 'sa.key'))) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(join(workDir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    writeFileSync(join(workDir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
  }
  writeFileSync(join(workDir, 'tokens.csv'), `${token},admin,admin,system:masters\n`, { mode: 0o600 });
  const kubeconfigPath = join(workDir, 'kubeconfig');
  writeFileSync(kubeconfigPath, kubeconfig(server, token), { mode: 0o600 });
  if (persistent) writeFileSync(statePath, JSON.stringify(state, null, 2), { mode: 0o600 });

  const children: ChildProcess[] = [];
  const startChild = (name: string, args: string[]): ChildProcess => {
    const logFile = createWriteStream(join(workDir, `${name}.log`), { flags: 'a' });
    const child = spawn(join(bin, name), args, { stdio: ['ignore', 'pipe', 'pipe'], detached: persistent });
    child.stdout!.pipe(logFile);
    child.stderr!.pipe(logFile);
    children.push(child);
    return child;
  };

  const etcdArgs = [
    '--name=default',
    `--data-dir=${join(workDir, 'etcd')}`,
    `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
    `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
    `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
    // Test data is thrown away: skip fsync there. Kept data is written safely.
    ...(persistent ? [] : ['--unsafe-no-fsync=true']),
    '--log-level=warn',
  ];
  const external = opts.etcdServers;
  let etcd = external === undefined ? startChild('etcd', etcdArgs) : undefined;
  // Detached children outlive a launcher that dies without stopping them: take them along.
  const killAll = () => children.forEach((c) => c.exitCode === null && c.signalCode === null && c.kill('SIGKILL'));
  if (persistent) process.once('exit', killAll);

  const apiArgs = [
    `--etcd-servers=${external ?? `http://127.0.0.1:${etcdPort}`}`,
    `--secure-port=${apiPort}`,
    `--bind-address=${address}`,
    `--advertise-address=${address}`,
    `--cert-dir=${join(workDir, 'certs')}`,
    `--token-auth-file=${join(workDir, 'tokens.csv')}`,
    '--authorization-mode=RBAC',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${join(workDir, 'sa.pub')}`,
    `--service-account-signing-key-file=${join(workDir, 'sa.key')}`,
    '--service-cluster-ip-range=10.96.0.0/24',
    '--allow-privileged=true',
    '--enable-priority-and-fairness=false',
    // Pods need ServiceAccount admission (their token volume); tests without a node create pods without one.
    ...(opts.node
      ? [
          `--kubelet-client-certificate=${opts.node.kubeletClientCertFile}`,
          `--kubelet-client-key=${opts.node.kubeletClientKeyFile}`,
          // Otherwise the API server asks the machine's DNS for the node's name.
          '--kubelet-preferred-address-types=InternalIP',
        ]
      : ['--disable-admission-plugins=ServiceAccount']),
    '--v=0',
  ];
  let apiServer = startChild('kube-apiserver', apiArgs);
  await waitReady(server, token, workDir);

  if (opts.controllerManager !== false) {
    startChild('kube-controller-manager', [
      `--kubeconfig=${kubeconfigPath}`,
      `--controllers=${['garbagecollector', 'namespace', ...(opts.node ? NODE_CONTROLLERS : [])].join(',')}`,
      // The kube-root-ca.crt ConfigMap every pod's token volume mounts: the API server's self-signed certificate.
      ...(opts.node ? [`--root-ca-file=${join(workDir, 'certs', 'apiserver.crt')}`] : []),
      '--leader-elect=false',
      '--secure-port=0',
      '--use-service-account-credentials=false',
      '--concurrent-gc-syncs=5',
      '--v=0',
    ]);
  }
  log(`control plane ready at ${server} (logs in ${workDir})`);

  const stopApiServer = async () => {
    await stopChild(apiServer);
    children.splice(children.indexOf(apiServer), 1);
  };
  const startApiServer = async () => {
    apiServer = startChild('kube-apiserver', apiArgs);
    await waitReady(server, token, workDir);
  };

  return {
    kubeconfigPath,
    server,
    token,
    workDir,
    async restartApiServer() {
      await stopApiServer();
      await startApiServer();
    },
    stopApiServer,
    startApiServer,
    async stopEtcd() {
      if (!etcd) throw new Error('this control plane stores its objects in an etcd API it did not start');
      await stopChild(etcd);
      children.splice(children.indexOf(etcd), 1);
    },
    async startEtcd() {
      if (external !== undefined) throw new Error('this control plane stores its objects in an etcd API it did not start');
      etcd = startChild('etcd', etcdArgs);
      // First in the list again, so that stop() ends it after kube-apiserver.
      children.splice(children.indexOf(etcd), 1);
      children.unshift(etcd);
      await waitReady(server, token, workDir);
    },
    async stop() {
      for (const child of [...children].reverse()) await stopChild(child);
      process.removeListener('exit', killAll);
      if (!persistent && !process.env.LATCHKEY_KEEP_CONTROLPLANE_DIR) rmSync(workDir, { recursive: true, force: true });
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

/** Stops a child process: SIGTERM, SIGKILL after 5 s; resolves once it has exited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
