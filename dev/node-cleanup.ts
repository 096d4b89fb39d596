/**
 * What a local node (dev/local-node.ts) leaves on the host besides its network and sysctls
 * (dev/node-host.ts): its pods' processes and cgroups, containerd's shims, the mounts under its
 * directory. Also the cgroup root kubelet needs before it starts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { CGROUP_ROOT, containerdSocket, type NodeLayout } from './node-config.js';
import { restoreSysctls, sh, tearDownNetwork } from './node-host.js';

/** Every cgroup directory of the node's pods, deepest first, in each v1 hierarchy (and the unified one). */
function podCgroups(): string[] {
  const dirs: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) walk(join(dir, entry.name));
    dirs.push(dir);
  };
  for (const hierarchy of existsSync('/sys/fs/cgroup') ? readdirSync('/sys/fs/cgroup') : []) {
    const root = join('/sys/fs/cgroup', hierarchy, CGROUP_ROOT);
    if (existsSync(root) && statSync(root).isDirectory()) walk(root);
  }
  return dirs;
}

/** kubelet wants its cgroup root in every v1 hierarchy (it creates the QoS cgroups below it). */
export function createCgroupRoot(): void {
  for (const hierarchy of readdirSync('/sys/fs/cgroup')) {
    if (hierarchy === 'unified') continue;
    const root = join('/sys/fs/cgroup', hierarchy, CGROUP_ROOT);
    mkdirSync(root, { recursive: true });
    // A v1 cpuset cgroup starts with no CPUs and no memory nodes: give it its parent's.
    for (const file of ['cpuset.cpus', 'cpuset.mems']) {
      const parent = join('/sys/fs/cgroup', hierarchy, file);
      if (existsSync(parent)) writeFileSync(join(root, file), readFileSync(parent, 'utf8').trim());
    }
    const shares = join(root, 'cpu.shares');
    if (existsSync(shares)) writeFileSync(shares, String(NODE_CPU_SHARES));
  }
}

/**
 * The weight of all the node's pods together against the host's own processes, which sit in the root
 * cgroup. At the default (1024) every pod together weighs as much as one busy host process: on a shared
 * machine with tens of runnable processes (other test runs) the pods got too little CPU to answer their
 * probes or requests within seconds (the e2e suite's upgrade under load failed with timeouts and pods
 * all unready at once). Four busy processes per core is what a node offering these cores may claim.
 */
export const NODE_CPU_SHARES = 4 * 1024 * Math.max(1, cpus().length);

/** PIDs of containerd shims started for this node's containerd (matched by its socket, which is ours alone). */
function shimPids(l: NodeLayout): number[] {
  const socket = containerdSocket(l);
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const args = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
        return args[0]?.includes('containerd-shim') && args.includes(socket);
      } catch {
        return false;
      }
    })
    .map(Number);
}

const kill = (pid: number) => {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
};

/**
 * Removes what a node leaves: the pods' processes (every process in its cgroups), containerd's shims,
 * the mounts under its directory (rootfs overlays, volumes, network namespaces), its cgroups, then the
 * host's network changes and sysctls. Runs before a start (after a crash) and on stop.
 */
export function cleanUp(l: NodeLayout, log: (line: string) => void): string[] {
  for (const dir of podCgroups()) {
    const procs = join(dir, 'cgroup.procs');
    if (existsSync(procs)) for (const pid of readFileSync(procs, 'utf8').split('\n').filter(Boolean)) kill(Number(pid));
  }
  shimPids(l).forEach(kill);
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((m): m is string => !!m && m.startsWith(`${l.workDir}/`))
    .sort((a, b) => b.length - a.length);
  for (const m of mounts) {
    try {
      execFileSync('umount', [m], { stdio: 'ignore' });
    } catch {
      sh('umount', ['-l', m], { ignoreFailure: true });
    }
  }
  for (let attempt = 0; attempt < 20; attempt++) {
    let left = 0;
    for (const dir of podCgroups()) {
      try {
        rmdirSync(dir);
      } catch {
        left++;
      }
    }
    if (left === 0) break;
    execFileSync('sleep', ['0.1']);
  }
  tearDownNetwork(l);
  const restored = restoreSysctls(l);
  if (restored.length > 0) log(`restored host settings: ${restored.join(', ')}`);
  for (const dir of ['containerd', 'kubelet', 'cni', 'pki']) rmSync(join(l.workDir, dir), { recursive: true, force: true });
  return restored;
}
