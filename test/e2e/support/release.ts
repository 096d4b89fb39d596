/**
 * The chart's release on the local node, as the e2e files install and watch it: its namespace with
 * the peers' CA, `helm install --wait` with the values every file shares, its pods (their restarts),
 * its Service, and REST through it with an Environment's secret key.
 */
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { CHART } from '../../chart/helm.js';
import type { NodeBed } from './node-bed.js';

export const RELEASE = 'latchkey';
export const RELEASE_NS = 'latchkey-system';

/** The release namespace with the CA ConfigMap `provider-ca` (config.egress.caBundle), made before the install as docs/install.md says. */
export async function createReleaseNamespace(core: CoreV1Api, caCert: string): Promise<void> {
  await core.createNamespace({ body: { metadata: { name: RELEASE_NS } } });
  await core.createNamespacedConfigMap({ namespace: RELEASE_NS, body: { metadata: { name: 'provider-ca' }, data: { 'ca.crt': caCert } } });
}

/**
 * `helm install --wait` of this checkout's chart: the image imported into the node (never pulled),
 * the peers on the host reachable (the node's address allowed, their CA trusted). Returns how long it took.
 */
export async function installRelease(
  bed: NodeBed,
  caCert: string,
  opts: { image: string; controllers: number; servers: number },
): Promise<number> {
  await createReleaseNamespace(bed.core, caCert);
  const [repository, tag] = opts.image.split(/:(?=[^:]+$)/) as [string, string];
  const set = {
    'image.repository': repository,
    'image.tag': tag,
    'image.pullPolicy': 'Never',
    'controller.replicas': opts.controllers,
    'server.replicas': opts.servers,
    'config.egress.allow': `{${bed.node.nodeAddress}}`,
    'config.egress.caBundle.configMap': 'provider-ca',
  };
  const started = Date.now();
  await bed.helm.ok(
    [
      'install',
      RELEASE,
      CHART,
      '--namespace',
      RELEASE_NS,
      ...Object.entries(set).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
      '--wait',
      '--timeout',
      '10m',
    ],
    660_000,
  );
  return Date.now() - started;
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
