/**
 * A local Kubernetes node next to the local control plane, so that pods really run: containerd
 * (Debian's, started with its own config, socket and state), kubelet, kube-scheduler and kube-proxy
 * (built by dev/node/build.sh from the control plane's Kubernetes version), the CNI bridge for pods,
 * a sandbox image built from pause.c. Needs root. One node per machine (kubelet's and kube-proxy's
 * ports are fixed): a lock in its fixed directory, taken over from a crashed run after cleaning up
 * what that run left. stop() puts the host back: processes, mounts, cgroups, iptables chains,
 * bridges, routes and sysctls. `npm run node` (dev/start-node.ts) runs one in a terminal.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { REPO_ROOT, startControlPlane, stopChild, type ControlPlane } from './control-plane.js';
import { lockDataDir, DataDirLockedError, type DataDirLock } from './data-dir-lock.js';
import {
  cniConfDir,
  cniNetwork,
  containerdConfig,
  containerdSocket,
  kubeletConfig,
  kubeletRootDir,
  type NodeLayout,
} from './node-config.js';
import { cleanUp, createCgroupRoot } from './node-cleanup.js';
import { applySysctls, setUpNetwork, sh } from './node-host.js';
import { buildSandboxImage, importImage, podmanSave } from './node-images.js';

export interface LocalNode {
  controlPlane: ControlPlane;
  kubeconfigPath: string;
  nodeName: string;
  /** The node's address: the API server's, NodePorts', and where host-side peers listen for pods to reach them. */
  nodeAddress: string;
  layout: NodeLayout;
  /** Puts a podman image into the node's containerd (podman save, ctr import); pods then run it with imagePullPolicy Never or IfNotPresent. */
  importImage(image: string): Promise<void>;
  /** Stops everything and restores the host; returns the host settings it put back. */
  stop(): Promise<string[]>;
}

export interface LocalNodeOptions {
  log?: (line: string) => void;
}

export const NODE_DIR = process.env.LATCHKEY_NODE_DIR ?? '/var/tmp/latchkey-node';

export function defaultLayout(sandboxImage: string): NodeLayout {
  return {
    workDir: NODE_DIR,
    nodeName: 'latchkey-node',
    // Private ranges nothing else on a test machine uses; none of it is routed off the machine.
    nodeAddress: '10.213.0.1',
    nodeBridge: 'lk-node0',
    podBridge: 'lk-pods0',
    podCidr: '10.214.0.0/24',
    serviceCidr: '10.96.0.0/24',
    sandboxImage,
    cniBinDir: '/usr/lib/cni',
  };
}

/** Why a node cannot start on this machine, or undefined when it can (the e2e suite reports the reason when it skips). */
export function whyNodeCannotStart(): string | undefined {
  if (process.platform !== 'linux') return `the local node needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'the local node needs root (containerd, kubelet, bridges and iptables)';
  if (!existsSync('/sys/fs/cgroup/memory') && !existsSync('/sys/fs/cgroup/cgroup.controllers')) return 'no memory cgroup at /sys/fs/cgroup';
  for (const tool of ['ip', 'iptables']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `${tool} is not installed`;
    }
  }
  return undefined;
}

/** Runs a script of the repository; its standard output's last line is its answer. */
function runScript(script: string, log: (line: string) => void): string {
  log(`running ${script}`);
  const out = execFileSync('bash', [join(REPO_ROOT, script)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 24,
  });
  return out.trim().split('\n').pop() ?? '';
}

export async function startLocalNode(opts: LocalNodeOptions = {}): Promise<LocalNode> {
  const log = opts.log ?? (() => undefined);
  const why = whyNodeCannotStart();
  if (why) throw new Error(why);
  runScript('dev/node/packages.sh', log);
  const bin = runScript('dev/node/build.sh', log);
  const version = bin.split('/').pop()!.split('-')[0]!;
  const layout = defaultLayout(`localhost/latchkey-pause:${version}`);
  mkdirSync(layout.workDir, { recursive: true });
  let lock: DataDirLock;
  try {
    lock = lockDataDir(layout.workDir);
  } catch (err) {
    if (err instanceof DataDirLockedError)
      throw new Error(`a local node is already running on this machine (process ${err.pid}); one node per machine`);
    throw err;
  }
  // A run that crashed left its processes, mounts and host changes: clear them first.
  cleanUp(layout, log);
  // The last run's container logs stay until the next start (for a failed run's diagnosis).
  rmSync(join(layout.workDir, 'pod-logs'), { recursive: true, force: true });
  for (const dir of ['containerd', 'kubelet', 'cni/net.d', 'pki', 'logs', 'pod-logs'])
    mkdirSync(join(layout.workDir, dir), { recursive: true });

  const children: ChildProcess[] = [];
  let controlPlane: ControlPlane | undefined;
  const stop = async (): Promise<string[]> => {
    for (const child of [...children].reverse()) await stopChild(child);
    const restored = cleanUp(layout, log);
    await controlPlane?.stop();
    lock.release();
    return restored;
  };
  try {
    const pki = makeCertificates(join(layout.workDir, 'pki'));
    applySysctls(layout);
    setUpNetwork(layout);
    controlPlane = await startControlPlane({
      log,
      node: { address: layout.nodeAddress, kubeletClientCertFile: pki.clientCert, kubeletClientKeyFile: pki.clientKey },
    });
    const cp = controlPlane;
    const startChild = (name: string, path: string, args: string[]) => {
      const logFile = createWriteStream(join(layout.workDir, 'logs', `${name}.log`), { flags: 'w' });
      const child = spawn(path, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout!.pipe(logFile);
      child.stderr!.pipe(logFile);
      children.push(child);
      return child;
    };

    writeFileSync(join(layout.workDir, 'containerd', 'config.toml'), containerdConfig(layout));
    writeFileSync(join(cniConfDir(layout), '10-latchkey-pods.conflist'), cniNetwork(layout));
    startChild('containerd', 'containerd', ['--config', join(layout.workDir, 'containerd', 'config.toml')]);
    await waitFor('containerd', () => existsSync(containerdSocket(layout)) && ctrOk(layout), 30_000, layout);
    await importImage(layout, buildSandboxImage(bin, layout.sandboxImage), log);

    createCgroupRoot();
    const resolvConf = join(layout.workDir, 'resolv.conf');
    // No cluster DNS on this node; pods get a resolver file of ours, not the machine's.
    writeFileSync(resolvConf, 'nameserver 127.0.0.1\n');
    const kubeletConfigPath = join(layout.workDir, 'kubelet-config.json');
    writeFileSync(kubeletConfigPath, kubeletConfig(layout, { clientCaFile: pki.ca, resolvConf }));
    startChild('kubelet', join(bin, 'kubelet'), [
      `--config=${kubeletConfigPath}`,
      `--kubeconfig=${cp.kubeconfigPath}`,
      `--hostname-override=${layout.nodeName}`,
      `--node-ip=${layout.nodeAddress}`,
      `--root-dir=${kubeletRootDir(layout)}`,
      `--cert-dir=${join(layout.workDir, 'kubelet', 'pki')}`,
      '--v=1',
    ]);
    startChild('kube-scheduler', join(bin, 'kube-scheduler'), [
      `--kubeconfig=${cp.kubeconfigPath}`,
      `--authentication-kubeconfig=${cp.kubeconfigPath}`,
      `--authorization-kubeconfig=${cp.kubeconfigPath}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      '--v=0',
    ]);
    startChild('kube-proxy', join(bin, 'kube-proxy'), [
      `--kubeconfig=${cp.kubeconfigPath}`,
      `--hostname-override=${layout.nodeName}`,
      '--proxy-mode=iptables',
      `--cluster-cidr=${layout.podCidr}`,
      `--nodeport-addresses=${layout.nodeAddress}/32`,
      // Leave the host's conntrack settings alone (it would raise nf_conntrack_max and the TCP timeouts).
      '--conntrack-max-per-core=0',
      '--conntrack-tcp-timeout-established=0',
      '--conntrack-tcp-timeout-close-wait=0',
      '--metrics-bind-address=127.0.0.1:10249',
      '--healthz-bind-address=127.0.0.1:10256',
      '--v=0',
    ]);
    const started = Date.now();
    await waitFor('the node to be Ready', async () => nodeReady(cp, layout.nodeName), 120_000, layout, children);
    log(
      `node ${layout.nodeName} Ready at ${layout.nodeAddress} ${Date.now() - started} ms after kubelet started (logs in ${join(layout.workDir, 'logs')})`,
    );
    return {
      controlPlane: cp,
      kubeconfigPath: cp.kubeconfigPath,
      nodeName: layout.nodeName,
      nodeAddress: layout.nodeAddress,
      layout,
      importImage: (image) => importImage(layout, podmanSave(image), log),
      stop,
    };
  } catch (err) {
    const logs = tailLogs(layout);
    await stop().catch(() => undefined);
    throw new Error(`${(err as Error).message}${logs}`);
  }
}

function ctrOk(l: NodeLayout): boolean {
  try {
    execFileSync('ctr', ['--address', containerdSocket(l), 'version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A self-made CA for kubelet's client authentication, and the API server's client certificate (system:masters). */
function makeCertificates(dir: string): { ca: string; clientCert: string; clientKey: string } {
  const ca = join(dir, 'kubelet-client-ca.crt');
  const caKey = join(dir, 'kubelet-client-ca.key');
  const clientCert = join(dir, 'apiserver-kubelet-client.crt');
  const clientKey = join(dir, 'apiserver-kubelet-client.key');
  const csr = join(dir, 'apiserver-kubelet-client.csr');
  sh('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    caKey,
    '-out',
    ca,
    '-days',
    '7',
    '-subj',
    '/CN=latchkey-node-kubelet-client-ca',
  ]);
  sh('openssl', [
    'req',
    '-new',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    clientKey,
    '-out',
    csr,
    '-subj',
    '/O=system:masters/CN=kube-apiserver-kubelet-client',
  ]);
  sh('openssl', ['x509', '-req', '-in', csr, '-CA', ca, '-CAkey', caKey, '-CAcreateserial', '-out', clientCert, '-days', '7']);
  return { ca, clientCert, clientKey };
}

async function nodeReady(cp: ControlPlane, name: string): Promise<boolean> {
  const node = await apiGet(cp, `/api/v1/nodes/${name}`);
  const conditions = (node as { status?: { conditions?: { type: string; status: string }[] } } | undefined)?.status?.conditions ?? [];
  return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

const insecure = new Agent({ rejectUnauthorized: false });

/** GET on the API server with the admin token; undefined for 404. */
export async function apiGet(cp: ControlPlane, path: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${cp.server}${path}`,
      { agent: insecure, headers: { authorization: `Bearer ${cp.token}` }, timeout: 5000 },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () =>
          res.statusCode === 404
            ? resolve(undefined)
            : res.statusCode === 200
              ? resolve(JSON.parse(body))
              : reject(new Error(`GET ${path}: ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  l: NodeLayout,
  children: ChildProcess[] = [],
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const dead = children.find((c) => c.exitCode !== null || c.signalCode !== null);
    if (dead) throw new Error(`${dead.spawnfile.split('/').pop()} exited (${dead.exitCode ?? dead.signalCode}) while waiting for ${what}`);
    if (await Promise.resolve(check()).catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (logs in ${join(l.workDir, 'logs')})`);
}

function tailLogs(l: NodeLayout): string {
  const dir = join(l.workDir, 'logs');
  if (!existsSync(dir)) return '';
  return readdirSync(dir)
    .map((f) => `\n--- ${f} ---\n${readFileSync(join(dir, f), 'utf8').trimEnd().split('\n').slice(-12).join('\n')}`)
    .join('');
}
