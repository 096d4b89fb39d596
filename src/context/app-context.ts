import type { KubeConfig } from '../k8s/client.js';
import type { CatalogStatus, CatalogStore, ConnectionScans, ConnectionStore, ConnectionUpkeep, StoreCaches } from '../k8s/store.js';
import type { Registry } from 'prom-client';
import type { Clock } from '../domain/clock.js';
import type { EgressGuard } from '../egress/guard.js';
import type { OperationLog } from '../oplog/operation-log.js';
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/log.js';

/**
 * What the controller and the HTTP server are built from; passed in, never imported as singletons.
 * Built in one place only: `createContext` (src/app/context.ts).
 */
export interface AppContext {
  config: Config;
  logger: Logger;
  kc: KubeConfig;
  /**
   * The store's caches: started and stopped with the process, watched by the controller, and what
   * src/k8s's writers of other objects (Integrations, handshake windows) write through.
   */
  caches: StoreCaches;
  /** Connections: reads and compare-and-swap writes (src/k8s/connection-store.ts). */
  connections: ConnectionStore;
  /** Many connections at a time: lists and scans (src/k8s/connection-scans.ts). */
  connectionScans: ConnectionScans;
  /** The controller's upkeep of its share: shard labels, half-made connections swept (src/k8s/connection-upkeep.ts). */
  connectionUpkeep: ConnectionUpkeep;
  /** Providers, Integrations, Environments and their Secrets, read-only (src/k8s/catalog-store.ts). */
  catalog: CatalogStore;
  /** Status and annotations of Providers, Integrations, Environments (src/k8s/catalog-status.ts). */
  catalogStatus: CatalogStatus;
  clock: Clock;
  metrics: Registry;
  /** Outbound HTTP (token endpoints, webhooks, app installation tokens), through {@link egress}; answers bounded by `providerAnswerMaxBytes`. */
  fetch: typeof fetch;
  /** Checks every address an outbound call connects to (the proxy's agents use it directly). */
  egress: EgressGuard;
  /**
   * The durable operation log (what `errors[].log_id` points at). Optional so that contexts built
   * by hand still compile; createContext always sets it, and producers record only when it is there.
   */
  oplog?: OperationLog;
}
