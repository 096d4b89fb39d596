/**
 * What every e2e file on the local node sets up and asks again: the node (dev/local-node.ts) with
 * images imported, a kubeconfig and helm for it; the chart's release (its pods, their images and
 * restarts, its Service); REST through the Service with an Environment's secret key; the
 * oidc-provider peer over HTTPS with a CA made at test start, on the node's address; and the
 * refresh-token check (each refresh token presented once). Where the node cannot start, a file's
 * cases are reported skipped with the reason ({@link describeOnNode}).
 */
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { startLocalNode, whyNodeCannotStart, type LocalNode } from '../../../dev/local-node.js';
import { startOidcServer, type OidcTestServer, type TestClient, type TokenCall } from '../../../dev/peers/oidc-server.js';
import { Helm } from '../../chart/helm.js';
import { makeTestCa, type TestCa } from '../../support/test-ca.js';
import { e2eImage } from '../global-setup.js';

export const RELEASE = 'latchkey';
export const RELEASE_NS = 'latchkey-system';
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

/** The release's pods (`components`: a label selector's value list, e.g. `controller` or `controller,server`). */
export async function releasePods(core: CoreV1Api, components?: string): Promise<V1Pod[]> {
  const selector = `app.kubernetes.io/instance=${RELEASE}${components ? `,app.kubernetes.io/component in (${components})` : ''}`;
  return (await core.listNamespacedPod({ namespace: RELEASE_NS, labelSelector: selector })).items;
}

/** Restarts of the containers (a liveness probe's kill, a crash): none may happen under load. */
export const restartsOf = (pods: V1Pod[]): string[] =>
  pods.flatMap((p) =>
    (p.status?.containerStatuses ?? []).filter((s) => s.restartCount > 0).map((s) => `${p.metadata!.name}: ${s.restartCount}`),
  );

/** The release Service's URL (its ClusterIP: pods and, through the node's route, the host reach it). */
export async function serviceUrlOf(core: CoreV1Api): Promise<string> {
  const svc = await core.readNamespacedService({ name: RELEASE, namespace: RELEASE_NS });
  return `http://${svc.spec!.clusterIP}:${svc.spec!.ports!.find((p) => p.name === 'http')!.port}`;
}

export interface RestAnswer {
  status: number;
  body: any;
}

/** REST through the Service with an Environment's secret key (its URL and key read at each call: both are set once the release is up). */
export function restClient(target: () => { url: string; secretKey: string }) {
  return async (method: string, path: string, body?: unknown): Promise<RestAnswer> => {
    const { url, secretKey } = target();
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as any) : undefined };
  };
}

export interface OidcPeer {
  ca: TestCa;
  oidc: OidcTestServer;
  /** Refresh grants at the peer, of one account or all of them. */
  refreshGrants(accountIds?: string[]): TokenCall[];
  close(): Promise<void>;
}

/**
 * oidc-provider over HTTPS on the node's address, with a CA made now (the release trusts it through
 * config.egress.caBundle, or NODE_OPTIONS for a release without that setting).
 */
export async function startOidcPeer(node: LocalNode, clients: TestClient[], accessTokenTtl: number): Promise<OidcPeer> {
  const ca = makeTestCa([node.nodeAddress]);
  const oidc = await startOidcServer({
    clients,
    accessTokenTtl,
    host: node.nodeAddress,
    tls: { key: ca.serverKey, cert: ca.serverCert },
  });
  return {
    ca,
    oidc,
    refreshGrants: (ids) =>
      oidc.tokenCalls.filter(
        (c) => c.grantType === 'refresh_token' && (ids === undefined || (c.accountId !== undefined && ids.includes(c.accountId))),
      ),
    async close() {
      await oidc.close();
      ca.remove();
    },
  };
}

/**
 * No refresh token presented twice, none refused: oidc-provider rotates refresh tokens, so a second
 * refresh with the same token (a refresh done twice) shows as the same hash twice, refused as reused
 * (which revokes the grant) or both accepted in a race. Returns the refreshes per connection of `ids`.
 */
export function expectEachRefreshOnce(peer: OidcPeer, ids: string[]): Record<string, number> {
  const grants = peer.refreshGrants(ids);
  const seen = new Map<string, number>();
  for (const g of grants) seen.set(g.presentedTokenHash!, (seen.get(g.presentedTokenHash!) ?? 0) + 1);
  expect(grants.filter((g) => g.status !== 200 || g.error).map((g) => `${g.accountId}: ${g.status} ${g.error ?? ''}`)).toEqual([]);
  expect(grants.filter((g) => seen.get(g.presentedTokenHash!)! > 1).map((g) => g.accountId)).toEqual([]);
  return Object.fromEntries(ids.map((id) => [id, grants.filter((g) => g.accountId === id).length]));
}
