/**
 * What the local node changes on the host, and its undo: the host sysctls kubelet and kube-proxy
 * rewrite (saved before the node starts, restored when it stops, even after a crash: the saved values
 * stay on disk until restored), the node bridge with its /32 address, the route of the Service range
 * onto it, the rules that keep pod traffic on this machine, and the iptables chains kubelet and
 * kube-proxy leave behind (KUBE-FIREWALL, KUBE-KUBELET-CANARY, KUBE-SERVICES, ...).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NodeLayout } from './node-config.js';

/** Host settings the node needs or that kubelet/kube-proxy write; each is put back on stop. */
const SYSCTLS: Record<string, string | undefined> = {
  // kubelet sets these three (its "kernel defaults"); we let it, and restore them.
  'vm/overcommit_memory': undefined,
  'kernel/panic': undefined,
  'kernel/panic_on_oops': undefined,
  // Pod to ClusterIP to pod is routed through the host.
  'net/ipv4/ip_forward': '1',
  // kube-proxy's rules must see bridged traffic (a pod reaching a Service backed by a pod on the same bridge).
  'net/bridge/bridge-nf-call-iptables': '1',
  // kube-proxy turns it on for NodePorts on loopback; ours are on the node address only, but it may still.
  'net/ipv4/conf/all/route_localnet': undefined,
};

/** The filter chain holding the node's own rules: pod traffic stays on the pods' bridge or goes to the host. */
export const NODE_CHAIN = 'LATCHKEY-NODE';

export function sh(cmd: string, args: string[], opts: { ignoreFailure?: boolean } = {}): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    if (opts.ignoreFailure) return '';
    const e = err as { stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${(e.stderr ?? e.message).trim()}`);
  }
}

const sysctlPath = (name: string) => join('/proc/sys', name);
const savedPath = (l: NodeLayout) => join(l.workDir, 'host-sysctls.json');

/** Saves the current values (unless a crashed run's originals are still saved) and sets the node's. */
export function applySysctls(l: NodeLayout): void {
  if (!existsSync(savedPath(l))) {
    const saved: Record<string, string> = {};
    for (const name of Object.keys(SYSCTLS)) {
      if (existsSync(sysctlPath(name))) saved[name] = readFileSync(sysctlPath(name), 'utf8').trim();
    }
    writeFileSync(savedPath(l), JSON.stringify(saved, null, 2));
  }
  for (const [name, value] of Object.entries(SYSCTLS)) {
    if (value !== undefined && existsSync(sysctlPath(name))) writeFileSync(sysctlPath(name), value);
  }
}

/** Puts back the values saved before the node (first) started; returns what it changed back. */
export function restoreSysctls(l: NodeLayout): string[] {
  if (!existsSync(savedPath(l))) return [];
  const saved = JSON.parse(readFileSync(savedPath(l), 'utf8')) as Record<string, string>;
  const restored: string[] = [];
  for (const [name, value] of Object.entries(saved)) {
    const now = readFileSync(sysctlPath(name), 'utf8').trim();
    if (now !== value) {
      writeFileSync(sysctlPath(name), value);
      restored.push(`${name}: ${now} -> ${value}`);
    }
  }
  rmSync(savedPath(l));
  return restored;
}

const linkExists = (name: string) => sh('ip', ['-o', 'link', 'show', 'dev', name], { ignoreFailure: true }) !== '';

/** The node bridge (its /32 address is the node's), the Service range routed onto it, the pod egress rules. */
export function setUpNetwork(l: NodeLayout): void {
  if (!linkExists(l.nodeBridge)) sh('ip', ['link', 'add', l.nodeBridge, 'type', 'bridge']);
  sh('ip', ['addr', 'replace', `${l.nodeAddress}/32`, 'dev', l.nodeBridge]);
  sh('ip', ['link', 'set', l.nodeBridge, 'up']);
  // A ClusterIP packet sent before kube-proxy wrote its rules must not take the default route out.
  sh('ip', ['route', 'replace', l.serviceCidr, 'dev', l.nodeBridge]);
  sh('iptables', ['-N', NODE_CHAIN], { ignoreFailure: true });
  sh('iptables', ['-F', NODE_CHAIN]);
  sh('iptables', ['-A', NODE_CHAIN, '-i', l.podBridge, '-o', l.podBridge, '-j', 'ACCEPT']);
  // Anything else a pod sends through the host (the outside interface above all) is dropped.
  sh('iptables', ['-A', NODE_CHAIN, '-i', l.podBridge, '-j', 'DROP']);
  sh('iptables', ['-A', NODE_CHAIN, '-s', l.podCidr, '-j', 'DROP']);
  if (!hasJump('FORWARD')) sh('iptables', ['-I', 'FORWARD', '1', '-j', NODE_CHAIN]);
}

function hasJump(chain: string): boolean {
  return sh('iptables', ['-S', chain]).split('\n').includes(`-A ${chain} -j ${NODE_CHAIN}`);
}

/** Splits an iptables-save rule line into arguments (double-quoted comments stay whole). */
export function ruleArgs(line: string): string[] {
  const args: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (const m of line.matchAll(re)) args.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]!);
  return args;
}

/**
 * The commands that remove every KUBE-* chain of an iptables-save dump of one table: first the
 * rules of other chains that jump to one, then each chain's rules, then the chains.
 */
export function kubeChainRemoval(dump: string): string[][] {
  const chains = dump
    .split('\n')
    .filter((line) => line.startsWith(':KUBE-'))
    .map((line) => line.slice(1).split(' ')[0]!);
  if (chains.length === 0) return [];
  const jumps = dump
    .split('\n')
    .filter((line) => line.startsWith('-A ') && !line.startsWith('-A KUBE-') && /\s-[jg] KUBE-/.test(line))
    .map((line) => ['-D', ...ruleArgs(line.slice(3))]);
  return [...jumps, ...chains.map((c) => ['-F', c]), ...chains.map((c) => ['-X', c])];
}

/** Removes what setUpNetwork and kubelet/kube-proxy added; safe to run when some or none of it is there. */
export function tearDownNetwork(l: NodeLayout): void {
  for (const tool of ['iptables', 'ip6tables']) {
    for (const table of ['filter', 'nat', 'mangle']) {
      const dump = sh(`${tool}-save`, ['-t', table], { ignoreFailure: true });
      for (const args of kubeChainRemoval(dump)) sh(tool, ['-t', table, ...args], { ignoreFailure: true });
    }
  }
  while (hasJump('FORWARD')) sh('iptables', ['-D', 'FORWARD', '-j', NODE_CHAIN]);
  sh('iptables', ['-F', NODE_CHAIN], { ignoreFailure: true });
  sh('iptables', ['-X', NODE_CHAIN], { ignoreFailure: true });
  sh('ip', ['route', 'del', l.serviceCidr, 'dev', l.nodeBridge], { ignoreFailure: true });
  for (const link of [l.podBridge, l.nodeBridge]) if (linkExists(link)) sh('ip', ['link', 'del', link]);
}
