import { KubeConfig } from '@kubernetes/client-node';

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
export type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
