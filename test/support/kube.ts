/** Reading what Latchkey wrote straight from the API server (not through a replica's caches), and writing objects as a user would. */
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../src/k8s/resources.js';

/** The condition of the given type on any of our resources (or on a plain object of that shape). */
export function condition<C extends { type: string }>(
  resource: { status?: { conditions?: C[] } } | undefined,
  type: string,
): C | undefined {
  return resource?.status?.conditions?.find((c) => c.type === type);
}

export async function readCustom<T>(kc: KubeConfig, plural: string, namespace: string, name: string): Promise<T> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  return (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural, name })) as T;
}

/** The Kubernetes Events about one object. */
export async function eventsOf(kc: KubeConfig, namespace: string, objectName: string) {
  const core = kc.makeApiClient(CoreV1Api);
  return (await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${objectName}` })).items;
}

/** The CustomObjectsApi request that creates one of Latchkey's namespaced objects exactly as given (`kind`, `metadata`, `spec`). */
export function customObject(
  namespace: string,
  plural: string,
  body: { kind: string; metadata: Record<string, unknown> } & Record<string, unknown>,
) {
  return { group: GROUP, version: VERSION, namespace, plural, body: { apiVersion: `${GROUP}/${VERSION}`, ...body } };
}
