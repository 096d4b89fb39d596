import { LatchkeyError } from '../domain/errors.js';
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type V1Secret,
} from './kubernetes-client.js';
import { makeBoundedApiClient } from './client.js';
import type { Logger } from '../platform/log.js';
import { ResourceCache } from './cache.js';
import { readOrUndefined } from './errors.js';
import { BoundedCache } from './bounded-cache.js';
import { ChangeFeed } from './change-feed.js';
import { dropManagedFields, ResilientInformer } from './informer.js';
import { metadataOnly } from './metadata-only.js';
import { internStrings, StringPool } from './string-pool.js';
import { shareConnections } from './shared-dispatcher.js';
import { apiPath, KubeJsonApi } from './json-api.js';
import { LIST_PAGE, type ListPage } from './paging.js';
import {
  CONNECTIONS,
  ENVIRONMENTS,
  GROUP,
  INTEGRATIONS,
  LABELS,
  PROVIDERS,
  VERSION,
  type ConnectionIdentity,
  type ConnectionResource,
  type EnvironmentResource,
  type IntegrationResource,
  type Kind,
  type ProviderResource,
} from './resources.js';
import type { ConnectionStatus } from './resources.js';
import type { StoredCredentials } from './credentials-secret.js';

export interface KubeStoreOptions {
  /** Namespaces to watch; empty for all. */
  namespaces?: string[];
  logger: Logger;
  /** Field manager name recorded on writes. */
  fieldManager?: string;
  /**
   * Cache only the credentials Secrets labelled `latchkey.dev/shard=<this>` (a controller replica's
   * share); undefined: every connection's Secret (server replicas).
   */
  credentialShard?: string;
  /**
   * Cache whole Connections only for those labelled `latchkey.dev/shard=<this>` (a controller
   * replica's share) and of every other one only its identity ({@link StoreCaches.connectionIndex});
   * undefined: every Connection whole.
   */
  connectionShard?: string;
  /**
   * The credential fields of a connection whose status was never written (a creation writes the
   * Connection and its Secret only): readers see them as if written; the owning controller writes them.
   */
  deriveStatus?: (resource: ConnectionResource, credentials: StoredCredentials) => ConnectionStatus;
  /**
   * Keep at most this many connections (and as many credentials Secrets) in memory, read from the API
   * server on a miss and dropped when a metadata-only watch says they changed: memory that does not
   * grow with the count (a server replica; docs/operations.md). Undefined: every connection cached by
   * informers (a controller, or a server of a cluster small enough).
   */
  boundedConnections?: { maxEntries: number };
  /** Connections a bounded store's scan reads per request to the API server (tests make it small). */
  scanPageSize?: number;
}

/** How a store holds connections and their Secrets: informer caches of all (or a shard's), or a bounded cache. */
export type ConnectionCache<T extends KubernetesObject> = ResourceCache<T> | BoundedCache<T>;

/** A Secret's values: credentials, neither repeated nor to be kept in a shared table. */
const SECRET_VALUES: ReadonlySet<string> = new Set(['data', 'stringData']);

/**
 * The caches every part of the store reads (informers, or a server's bounded cache of connections
 * with its change feeds) and the clients that fill them: built from the options, started and
 * stopped together. The parts (src/k8s/store.ts) read and write through it.
 */
export class StoreCaches {
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
  /** The calls of every refresh (the Secret's read and write, the Connection's writes), as plain JSON: see ./json-api.ts. */
  readonly json: KubeJsonApi;
  readonly providers: ResourceCache<ProviderResource>;
  readonly integrations: ResourceCache<IntegrationResource>;
  readonly environments: ResourceCache<EnvironmentResource>;
  /** Secrets that Integrations and Environments refer to (labelled latchkey.dev/watch=true). */
  readonly referencedSecrets: ResourceCache<V1Secret>;
  readonly connections: ConnectionCache<ConnectionResource>;
  /** Connection credential Secrets (labelled managed-by=latchkey). */
  readonly credentialSecrets: ConnectionCache<V1Secret>;
  /**
   * Every Connection's identity: name, uid, versions, shard label: the same cache as `connections`
   * when that caches every Connection whole. None in a sharded store (a controller replica keeps
   * whole only its share: it learns of the others from {@link connectionChanges} and the identity
   * scan, and keeps nothing of them) or a bounded one.
   */
  readonly connectionIndex: ResourceCache<ConnectionIdentity> | undefined;
  /**
   * A sharded store's metadata-only watch of every Connection (one per watched namespace): which
   * changed or went, for the controller to see new connections and deletions outside its share
   * without keeping any of them.
   */
  readonly connectionChanges: ChangeFeed[];
  /** The shard whose Connections this store caches whole (undefined: all of them). */
  readonly connectionShard: string | undefined;
  readonly logger: Logger;
  readonly fieldManager: string;
  readonly deriveStatus: KubeStoreOptions['deriveStatus'];
  readonly scanPageSize: number;
  /** The watched namespaces (none: all). */
  readonly namespaces: string[];
  /** The metadata-only view of `kc` and its client (sharded stores: the Connection identities). */
  private metadataClient: { kc: KubeConfig; custom: CustomObjectsApi } | undefined;
  /** One copy of each repeated string across every cache of this store. */
  private readonly strings = new StringPool();

  constructor(
    readonly kc: KubeConfig,
    opts: KubeStoreOptions,
  ) {
    this.logger = opts.logger.child({ component: 'store' });
    this.fieldManager = opts.fieldManager ?? 'latchkey';
    this.deriveStatus = opts.deriveStatus;
    this.scanPageSize = opts.scanPageSize ?? LIST_PAGE;
    // Every typed client of this KubeConfig (the store's, the operation log's, the Events') reuses its connections.
    shareConnections(kc);
    this.custom = makeBoundedApiClient(kc, CustomObjectsApi);
    this.core = makeBoundedApiClient(kc, CoreV1Api);
    this.json = new KubeJsonApi(kc);
    const namespaces = (this.namespaces = opts.namespaces ?? []);
    this.providers = new ResourceCache([this.customInformer(PROVIDERS, undefined)]);
    const perNamespace = <T extends KubernetesObject>(
      make: (ns: string | undefined) => ResilientInformer<T>,
      selects?: (obj: KubernetesObject) => boolean,
    ) => new ResourceCache(namespaces.length ? namespaces.map(make) : [make(undefined)], Date.now, selects);
    this.integrations = perNamespace((ns) => this.customInformer(INTEGRATIONS, ns));
    const connectionShard = (this.connectionShard = opts.connectionShard);
    const credentialSelector = `${LABELS.managedBy}=${LABELS.managedByValue}${opts.credentialShard ? `,${LABELS.shard}=${opts.credentialShard}` : ''}`;
    if (opts.boundedConnections) {
      if (connectionShard || opts.credentialShard) throw new Error('a bounded store caches no shard');
      const { maxEntries } = opts.boundedConnections;
      this.connections = this.boundedCache<ConnectionResource>(namespaces, maxEntries, connectionCollection, {});
      this.credentialSecrets = this.boundedCache<V1Secret>(namespaces, maxEntries, secretCollection, {
        [LABELS.managedBy]: LABELS.managedByValue,
      });
      this.connectionIndex = undefined;
    } else {
      this.connections = connectionShard
        ? perNamespace(
            (ns) => this.customInformer(CONNECTIONS, ns, `${LABELS.shard}=${connectionShard}`),
            (c) => c.metadata?.labels?.[LABELS.shard] === connectionShard,
          )
        : perNamespace((ns) => this.customInformer(CONNECTIONS, ns));
      this.connectionIndex = connectionShard ? undefined : (this.connections as unknown as ResourceCache<ConnectionIdentity>);
      const shard = opts.credentialShard;
      this.credentialSecrets = perNamespace(
        (ns) => this.secretInformer(ns, credentialSelector),
        shard ? (secret) => secret.metadata?.labels?.[LABELS.shard] === shard : undefined,
      );
    }
    this.connectionChanges =
      connectionShard && !opts.boundedConnections
        ? (namespaces.length ? namespaces : [undefined]).map((ns) => this.changeFeed(connectionCollection(ns)))
        : [];
    this.environments = perNamespace((ns) => this.customInformer(ENVIRONMENTS, ns));
    this.referencedSecrets = perNamespace((ns) => this.secretInformer(ns, `${LABELS.watch}=true`));
  }

  private get all(): Array<ConnectionCache<KubernetesObject>> {
    return [
      this.providers,
      this.integrations,
      this.environments,
      this.connections as ConnectionCache<KubernetesObject>,
      this.credentialSecrets,
      this.referencedSecrets,
    ];
  }

  /** Connections are read on demand and at most so many kept ({@link KubeStoreOptions.boundedConnections}). */
  get bounded(): boolean {
    return this.connections instanceof BoundedCache;
  }

  /**
   * The informer caches of connections and their Secrets (every one, or a shard's): what a controller
   * walks and listens to. A bounded store has none.
   */
  get watched(): { connections: ResourceCache<ConnectionResource>; credentialSecrets: ResourceCache<V1Secret> } {
    const { connections, credentialSecrets } = this;
    if (connections instanceof BoundedCache || credentialSecrets instanceof BoundedCache)
      throw new LatchkeyError('internal', 'bounded_store', 'a bounded store keeps no informer caches of connections');
    return { connections, credentialSecrets };
  }

  async start(): Promise<void> {
    // The feeds first: a scan of the identities after start() misses nothing they do not report.
    await Promise.all(this.connectionChanges.map((f) => f.start()));
    await Promise.all(this.all.map((c) => c.start()));
    this.logger.info('caches synced');
  }

  async stop(): Promise<void> {
    await Promise.all([...this.all.map((c) => c.stop()), ...this.connectionChanges.map((f) => f.stop())]);
    await this.json.close();
  }

  get hasSynced(): boolean {
    return this.all.every((c) => c.hasSynced);
  }

  /** Every cache follows the API server now: false while a watch is down (an API server restart) until it resumes. */
  get isFresh(): boolean {
    return this.all.every((c) => c.isFresh) && this.connectionChanges.every((f) => f.isFresh);
  }

  /** A page of a collection of custom objects (`namespace` undefined: of every namespace), through `custom`. */
  customPage<T extends KubernetesObject>(
    kind: Kind<T>,
    namespace: string | undefined,
    labelSelector?: string,
    custom = this.custom,
  ): ListPage<T> {
    return async (limit, _continue) => {
      const base = { group: GROUP, version: VERSION, plural: kind.plural, labelSelector, limit, _continue };
      return (
        namespace ? await custom.listNamespacedCustomObject({ ...base, namespace }) : await custom.listClusterCustomObject(base)
      ) as KubernetesListObject<T>;
    };
  }

  /** The metadata-only view of `kc` and its client (object metadata alone: the identity scan, the change feeds). */
  metadataView(): { kc: KubeConfig; custom: CustomObjectsApi } {
    if (!this.metadataClient) {
      const kc = metadataOnly(this.kc);
      this.metadataClient = { kc, custom: makeBoundedApiClient(kc, CustomObjectsApi) };
    }
    return this.metadataClient;
  }

  private customInformer<T extends KubernetesObject>(kind: Kind<T>, namespace: string | undefined, labelSelector?: string) {
    const path = namespace
      ? `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${kind.plural}`
      : `/apis/${GROUP}/${VERSION}/${kind.plural}`;
    const listPage = this.customPage(kind, namespace, labelSelector);
    return new ResilientInformer<T>({ kc: this.kc, path, listPage, labelSelector, logger: this.logger, strings: this.strings });
  }

  private secretInformer(namespace: string | undefined, labelSelector: string): ResilientInformer<V1Secret> {
    const path = namespace ? `/api/v1/namespaces/${namespace}/secrets` : '/api/v1/secrets';
    const listPage: ListPage<V1Secret> = (limit, _continue) =>
      namespace
        ? this.core.listNamespacedSecret({ namespace, labelSelector, limit, _continue })
        : this.core.listSecretForAllNamespaces({ labelSelector, limit, _continue });
    const { kc, logger, strings } = this;
    return new ResilientInformer<V1Secret>({ kc, path, listPage, labelSelector, logger, strings, unpooledKeys: SECRET_VALUES });
  }

  /**
   * A bounded cache of one collection (Connections, or credentials Secrets selected by `labels`):
   * objects read by name on demand, dropped on the changes a metadata-only watch per namespace reports.
   */
  private boundedCache<T extends KubernetesObject>(
    namespaces: string[],
    maxEntries: number,
    collection: (ns: string | undefined) => string,
    labels: Record<string, string>,
  ): BoundedCache<T> {
    const wanted = Object.entries(labels);
    const labelSelector = wanted.map(([k, v]) => `${k}=${v}`).join(',') || undefined;
    const feeds = (namespaces.length ? namespaces : [undefined]).map((ns) => this.changeFeed(collection(ns), labelSelector));
    const selects = (obj: T) => wanted.every(([k, v]) => obj.metadata?.labels?.[k] === v);
    return new BoundedCache<T>({
      maxEntries,
      feeds,
      selects,
      read: async (namespace, name) => {
        return readOrUndefined(async () => {
          const obj = await this.json.get<T>(`${collection(namespace)}/${encodeURIComponent(name)}`);
          return selects(obj) ? obj : undefined;
        });
      },
      shape: (obj) => {
        dropManagedFields(obj);
        internStrings(obj, this.strings, SECRET_VALUES);
      },
    });
  }

  /** Which objects of a collection change, as metadata, keeping none (./change-feed.ts). */
  private changeFeed(path: string, labelSelector?: string): ChangeFeed {
    return new ChangeFeed({
      kc: this.metadataView().kc,
      path,
      labelSelector,
      logger: this.logger,
      // One object at most: the answer's list version is where the watch starts.
      currentVersion: async () =>
        (
          await this.json.get<KubernetesListObject<KubernetesObject>>(path, {
            query: { limit: '1', ...(labelSelector ? { labelSelector } : {}) },
          })
        ).metadata?.resourceVersion ?? '0',
    });
  }
}

export const connectionCollection = (namespace: string | undefined) =>
  namespace
    ? apiPath(`/apis/${GROUP}/${VERSION}/namespaces`, namespace, CONNECTIONS.plural)
    : `/apis/${GROUP}/${VERSION}/${CONNECTIONS.plural}`;
const secretCollection = (namespace: string | undefined) =>
  namespace ? apiPath('/api/v1/namespaces', namespace, 'secrets') : '/api/v1/secrets';
