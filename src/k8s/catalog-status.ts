import { LatchkeyError } from '../domain/errors.js';
import type { KubernetesObject } from './kubernetes-client.js';
import type { ResourceCache } from './cache.js';
import { compareAndSwap } from './cas.js';
import {
  CONNECTIONS,
  ENVIRONMENTS,
  GROUP,
  INTEGRATIONS,
  PROVIDERS,
  VERSION,
  type CommonStatus,
  type IntegrationResource,
  type Kind,
} from './resources.js';
import type { StoreCaches } from './store-caches.js';

/**
 * What the controller writes of the catalog: the status of Providers, Integrations and Environments,
 * and the annotations it keeps on an Integration (what refreshes found out about it). Compare-and-swap
 * on resourceVersion, remembered by this process's reads.
 */
export class CatalogStatus {
  constructor(private readonly caches: StoreCaches) {}

  /** Compare-and-swap update of the status of a Provider, Integration or Environment. */
  async updateStatus<T extends KubernetesObject & { status?: CommonStatus }>(
    kind: Kind<T>,
    namespace: string | undefined,
    name: string,
    mutate: (current: CommonStatus) => CommonStatus | undefined,
  ): Promise<T> {
    // A Connection's status has its own writers and fields (ConnectionStore.updateConnectionStatus).
    if (kind.plural === CONNECTIONS.plural)
      throw new LatchkeyError('internal', 'status_field_not_owned', 'Connection status is written through updateConnectionStatus');
    const { custom, fieldManager } = this.caches;
    const cache = this.cacheOf(kind) as ResourceCache<T>;
    const base = { group: GROUP, version: VERSION, plural: kind.plural, name };
    const result = await compareAndSwap<T>({
      what: `${kind.kind} status ${namespace ?? ''}/${name}`,
      readCached: () => cache.get(name, namespace),
      readFresh: async () =>
        (namespace ? await custom.getNamespacedCustomObject({ ...base, namespace }) : await custom.getClusterCustomObject(base)) as T,
      mutate: (current) => {
        const status = mutate(structuredClone(current.status ?? {}));
        return status === undefined ? undefined : { ...current, status };
      },
      write: async (next) =>
        (namespace
          ? await custom.replaceNamespacedCustomObjectStatus({ ...base, namespace, body: next, fieldManager })
          : await custom.replaceClusterCustomObjectStatus({ ...base, body: next, fieldManager })) as T,
    });
    cache.remember(result);
    return result;
  }

  /**
   * Sets (or with `undefined` removes) one annotation of an Integration, compare-and-swap. Annotations
   * do not bump the generation, so the Integration's spec stays the operator's.
   */
  async annotateIntegration(namespace: string, name: string, key: string, value: string | undefined): Promise<IntegrationResource> {
    const { custom, fieldManager, integrations } = this.caches;
    const base = { group: GROUP, version: VERSION, plural: INTEGRATIONS.plural, namespace, name };
    const result = await compareAndSwap<IntegrationResource>({
      what: `integration ${namespace}/${name}`,
      readCached: () => integrations.get(name, namespace),
      readFresh: async () => (await custom.getNamespacedCustomObject(base)) as IntegrationResource,
      mutate: (current) => {
        const annotations = { ...current.metadata.annotations };
        if (annotations[key] === value) return undefined;
        if (value === undefined) delete annotations[key];
        else annotations[key] = value;
        return { ...current, metadata: { ...current.metadata, annotations } };
      },
      write: async (next) => (await custom.replaceNamespacedCustomObject({ ...base, body: next, fieldManager })) as IntegrationResource,
    });
    integrations.remember(result);
    return result;
  }

  private cacheOf(kind: Kind<KubernetesObject>): ResourceCache<KubernetesObject> {
    switch (kind.plural) {
      case PROVIDERS.plural:
        return this.caches.providers;
      case INTEGRATIONS.plural:
        return this.caches.integrations;
      case ENVIRONMENTS.plural:
        return this.caches.environments;
      default:
        throw new Error(`unknown kind ${kind.kind}`);
    }
  }
}
