/**
 * Images for the local node (dev/local-node.ts), without a registry: the pod sandbox image built from
 * the static pause binary, and podman images put into the node's containerd (podman save, ctr import).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { containerdSocket, type NodeLayout } from './node-config.js';
import { sh } from './node-host.js';

/** The pod sandbox image: the static pause binary in a FROM scratch image, built by podman (no registry to pull from). */
export function buildSandboxImage(bin: string, image: string): string {
  const context = mkdtempSync(join(tmpdir(), 'latchkey-pause-'));
  try {
    execFileSync('cp', [join(bin, 'pause'), join(context, 'pause')]);
    writeFileSync(join(context, 'Containerfile'), 'FROM scratch\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause"]\n');
    sh('podman', ['build', '--quiet', '--tag', image, '--file', join(context, 'Containerfile'), context]);
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
  return podmanSave(image);
}

/** podman save to a docker-archive file (ctr imports it); returns its path. */
export function podmanSave(image: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'latchkey-image-')), 'image.tar');
  sh('podman', ['save', '--format', 'docker-archive', '--output', file, image]);
  return file;
}

export async function importImage(l: NodeLayout, archive: string, log: (line: string) => void): Promise<void> {
  try {
    const started = Date.now();
    const out = sh('ctr', ['--address', containerdSocket(l), '-n', 'k8s.io', 'images', 'import', '--no-unpack', archive]);
    log(`imported ${out.trim() || archive} into the node in ${Date.now() - started} ms`);
  } finally {
    rmSync(join(archive, '..'), { recursive: true, force: true });
  }
}
