import type { KubeConfig } from './kubernetes-client.js';
import { CatalogStatus } from './catalog-status.js';
import { CatalogStore } from './catalog-store.js';
import { ConnectionScans } from './connection-scans.js';
import { ConnectionStore } from './connection-store.js';
import { ConnectionUpkeep } from './connection-upkeep.js';
import { StoreCaches, type KubeStoreOptions } from './store-caches.js';

export type { KubeStoreOptions } from './store-caches.js';
export type { StoredCredentials, StoredConnection, NewConnection } from './credentials-secret.js';
export { credentialsSecret } from './credentials-secret.js';
export type { ConnectionSelection } from './connection-scans.js';
export { createCustomObject, deleteCustomObject } from './custom-objects.js';
export { StoreCaches, CatalogStore, CatalogStatus, ConnectionStore, ConnectionScans, ConnectionUpkeep };

/** The parts a caller reads and writes through, as a {@link KubeStore} and an AppContext both hand them out. */
export type StoreParts = Pick<KubeStore, 'caches' | 'connections' | 'connectionScans' | 'connectionUpkeep' | 'catalog' | 'catalogStatus'>;

/**
 * The one place that reads and writes Latchkey's objects in Kubernetes, as parts by job, built
 * together over one set of caches: callers take the part they use (the AppContext hands out each). Reads come from informer caches (or a server's
 * bounded cache); writes are compare-and-swap on resourceVersion and retried on conflict.
 */
export class KubeStore {
  /** The caches and clients every part reads through; started and stopped with the store. */
  readonly caches: StoreCaches;
  /** Connections: reads and compare-and-swap writes. */
  readonly connections: ConnectionStore;
  /** Many connections at a time (lists, scans of identities), a page at a time from the API server. */
  readonly connectionScans: ConnectionScans;
  /** The controller's upkeep of its share: shard labels, half-made connections swept. */
  readonly connectionUpkeep: ConnectionUpkeep;
  /** Providers, Integrations, Environments and their Secrets, read-only. */
  readonly catalog: CatalogStore;
  /** Status and annotations of Providers, Integrations, Environments. */
  readonly catalogStatus: CatalogStatus;

  constructor(kc: KubeConfig, opts: KubeStoreOptions) {
    this.caches = new StoreCaches(kc, opts);
    this.connections = new ConnectionStore(this.caches);
    this.connectionScans = new ConnectionScans(this.caches, this.connections);
    this.connectionUpkeep = new ConnectionUpkeep(this.caches, this.connections);
    this.catalog = new CatalogStore(this.caches);
    this.catalogStatus = new CatalogStatus(this.caches);
  }

  start(): Promise<void> {
    return this.caches.start();
  }

  stop(): Promise<void> {
    return this.caches.stop();
  }

  get hasSynced(): boolean {
    return this.caches.hasSynced;
  }

  /** Every cache follows the API server now: false while a watch is down (an API server restart) until it resumes. */
  get isFresh(): boolean {
    return this.caches.isFresh;
  }
}
