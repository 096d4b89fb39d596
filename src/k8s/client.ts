import { createConfiguration, KubeConfig, ServerConfiguration, type RequestContext, type ResponseContext } from './kubernetes-client.js';

/**
 * Loads the Kubernetes client configuration: an explicit kubeconfig file when given, otherwise the
 * usual order (KUBECONFIG, ~/.kube/config, then the pod's service account when in a cluster).
 */
export function loadKubeConfig(kubeconfigPath?: string): KubeConfig {
  const kc = new KubeConfig();
  if (kubeconfigPath) kc.loadFromFile(kubeconfigPath);
  else kc.loadFromDefault();
  return kc;
}

/** True when the configuration names a cluster to talk to. */
export function hasCluster(kc: KubeConfig): boolean {
  return Boolean(kc.getCurrentCluster()?.server);
}

/** How long one Kubernetes API call may take before it is abandoned (not watches: they are long-lived). */
export const DEFAULT_API_TIMEOUT_MS = 10_000;

/**
 * An API client like `kc.makeApiClient`, but every request carries an abort signal that fires after
 * `timeoutMs`. client-node sets no timeout of its own, so a hung API server connection would hold
 * a refresh (and its Lease) forever; a bounded call fails and the caller's error path runs instead.
 */
export function makeBoundedApiClient<T>(
  kc: KubeConfig,
  apiClientType: new (config: ReturnType<typeof createConfiguration>) => T,
  timeoutMs: number = DEFAULT_API_TIMEOUT_MS,
): T {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('No active cluster!');
  const config = createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: kc },
    promiseMiddleware: [
      {
        pre: (request: RequestContext) => {
          request.setSignal(AbortSignal.timeout(timeoutMs));
          return Promise.resolve(request);
        },
        post: (response: ResponseContext) => Promise.resolve(response),
      },
    ],
  });
  return new apiClientType(config);
}

export type { KubeConfig, KubernetesObject } from './kubernetes-client.js';
