/**
 * What every e2e file on the local node sets up first: the node (dev/local-node.ts) with images
 * imported, a kubeconfig and helm for it; and what each asks again (polling, a log prefix, the
 * suite's image under another tag). Where the node cannot start, a file's cases are reported skipped
 * with the reason ({@link describeOnNode}). The release on it: release.ts; the OAuth peer: oidc-peer.ts.
 */
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalNode, whyNodeCannotStart, type LocalNode } from '../../../dev/local-node.js';
import { Helm } from '../../chart/helm.js';
import { e2eImage } from '../global-setup.js';

export const IMAGE_REPO = 'localhost/latchkey';

/** A describe that runs on a local node, or one skipped case named with the reason (the suite never disappears silently). */
export function describeOnNode(title: string, body: () => void): void {
  const cannot = whyNodeCannotStart();
  if (cannot) {
    test.skip(`${title} (skipped: ${cannot})`, () => undefined);
    describe.skip(title, body);
  } else describe(title, body);
}

export const logAs =
  (tag: string) =>
  (line: string): void => {
    process.stderr.write(`[${tag}] ${line}\n`);
  };

/** Polls `check` until it answers something truthy; the last error it threw is in the timeout's message. */
export async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 180_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
}

/** The image of `npm run image` (built once by the suite's global setup) under another tag, as a release pipeline's retag does. */
export function tagE2eImage(tag: string): string {
  const ref = `${IMAGE_REPO}:${tag}`;
  execFileSync('podman', ['tag', e2eImage(), ref]);
  return ref;
}

export interface NodeBed {
  node: LocalNode;
  kc: KubeConfig;
  core: CoreV1Api;
  helm: Helm;
  /** Removes helm's folders and stops the node. */
  stop(): Promise<void>;
}

/** Starts the node, imports `images` (podman names) into it, and makes a kubeconfig and helm for it. */
export async function startNodeBed(log: (line: string) => void, images: string[]): Promise<NodeBed> {
  const node = await startLocalNode({ log });
  for (const image of images) await node.importImage(image);
  const kc = new KubeConfig();
  kc.loadFromFile(node.kubeconfigPath);
  const helm = await Helm.build(node.kubeconfigPath);
  return {
    node,
    kc,
    core: kc.makeApiClient(CoreV1Api),
    helm,
    async stop() {
      helm.cleanup();
      // It logs the host settings it put back.
      await node.stop();
    },
  };
}

/**
 * Copies the node's container logs as they are written (kubelet deletes a replaced pod's at once, and
 * a failed request is explained by the old pods' as much as by the new ones'). `end(keep)`: a last
 * copy, then the folder kept (its path answered) or removed.
 */
export function keepPodLogs(bed: NodeBed, name: string): { end(keep: boolean): string | undefined } {
  const kept = mkdtempSync(join(tmpdir(), `latchkey-${name}-`));
  const copy = () => spawnSync('cp', ['-a', '--update', `${bed.node.layout.workDir}/pod-logs/.`, kept]);
  const copier = setInterval(copy, 2000);
  return {
    end(keep) {
      clearInterval(copier);
      copy();
      if (keep) return kept;
      rmSync(kept, { recursive: true, force: true });
      return undefined;
    },
  };
}
