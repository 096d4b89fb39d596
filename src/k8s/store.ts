import { fitCredentials } from '../domain/credentials.js';
import { hasCode, LatchkeyError } from '../domain/errors.js';
import { ConnectionStatusWriter, fieldsNotOwned } from '../domain/connection-status-writers.js';
import { randomInt } from 'node:crypto';
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type V1Secret,
  PatchStrategy,
  setHeaderOptions,
} from './kubernetes-client.js';
import { makeBoundedApiClient } from './client.js';
import type { Logger } from '../platform/log.js';
import { ResourceCache } from './cache.js';
import { compareAndSwap } from './cas.js';
import { alreadyExists, apiMessage, isConflict, isNotFound, OBJECT_NOT_FOUND, objectNotFound } from './errors.js';
import { BoundedCache } from './bounded-cache.js';
import { ChangeFeed } from './change-feed.js';
import { dropManagedFields, ResilientInformer } from './informer.js';
import { metadataOnly } from './metadata-only.js';
import { internStrings, StringPool } from './string-pool.js';
import { fromStoredForm, toStoredForm } from './stored-credentials.js';
import { RESET_MANAGED_FIELDS } from './managed-fields.js';
import { shareConnections } from './shared-dispatcher.js';
import { apiPath, KubeJsonApi } from './json-api.js';
import { connectionObjectName } from './names.js';
import {
  API_VERSION,
  CONNECTIONS,
  CREDENTIALS_KEY,
  CREDENTIALS_SECRET_TYPE,
  ENVIRONMENTS,
  GROUP,
  INTEGRATIONS,
  LABELS,
  PROVIDERS,
  VERSION,
  type CommonStatus,
  type ConnectionIdentity,
  type ConnectionResource,
  type ConnectionSpec,
  type ConnectionStatus,
  type EnvironmentResource,
  type IntegrationResource,
  type Kind,
  type ProviderResource,
} from './resources.js';

/** Credentials as stored in a connection's Secret: a JSON object with a `type`. */
export type StoredCredentials = { type: string } & Record<string, unknown>;

export interface StoredConnection {
  resource: ConnectionResource;
  credentials: StoredCredentials;
  /** resourceVersion of the credentials Secret, for compare-and-swap. */
  credentialsVersion: string;
}

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
   * replica's share) and of every other one only its identity ({@link KubeStore.connectionIndex});
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
type ConnectionCache<T extends KubernetesObject> = ResourceCache<T> | BoundedCache<T>;

/** Request options of a JSON merge patch (the generated clients send JSON Patch otherwise). */
const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** A Secret's values: credentials, neither repeated nor to be kept in a shared table. */
const SECRET_VALUES: ReadonlySet<string> = new Set(['data', 'stringData']);

export interface NewConnection {
  namespace: string;
  spec: Omit<ConnectionSpec, 'id'> & { id?: number };
  credentials: StoredCredentials;
  status?: ConnectionStatus;
  /** Extra labels of the Connection (e.g. the Connect session that created it). */
  labels?: Record<string, string>;
}

/** Creates a namespaced custom object; a name already taken is an `already_exists` error ({@link alreadyExists}) naming `what`. */
export async function createCustomObject<T extends object>(
  custom: CustomObjectsApi,
  target: { namespace: string; plural: string; fieldManager: string },
  body: T,
  what: string,
): Promise<T> {
  try {
    return (await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, ...target, body })) as T;
  } catch (err) {
    if (isConflict(err)) throw alreadyExists(what);
    throw err;
  }
}

/**
 * Deletes a namespaced custom object (its dependents in the background), only the one with `uid`
 * when given; false when there was none.
 */
export async function deleteCustomObject(
  custom: CustomObjectsApi,
  target: { namespace: string; plural: string; name: string },
  uid: string | undefined,
): Promise<boolean> {
  try {
    await custom.deleteNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      ...target,
      propagationPolicy: 'Background',
      body: uid ? { preconditions: { uid } } : undefined,
    });
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/**
 * The one place that reads and writes Latchkey's objects in Kubernetes. Reads come from informer
 * caches; writes are compare-and-swap on resourceVersion and retried on conflict.
 */
export class KubeStore {
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
  /** The calls of every refresh (the Secret's read and write, the Connection's writes), as plain JSON: see ./json-api.ts. */
  private readonly json: KubeJsonApi;
  readonly providers: ResourceCache<ProviderResource>;
  /** alias -> provider name ({@link getProvider}); undefined after a Provider changed. */
  private providerAliases: Map<string, string> | undefined;
  readonly integrations: ResourceCache<IntegrationResource>;
  readonly connections: ConnectionCache<ConnectionResource>;
  /**
   * Every Connection's identity: name, uid, versions, shard label: the same cache as `connections`
   * when that caches every Connection whole. None in a sharded store (a controller replica keeps
   * whole only its share: it learns of the others from {@link connectionChanges} and
   * {@link scanConnectionIdentities}, and keeps nothing of them) or a bounded one.
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
  readonly environments: ResourceCache<EnvironmentResource>;
  /** Connection credential Secrets (labelled managed-by=latchkey). */
  readonly credentialSecrets: ConnectionCache<V1Secret>;
  /** Secrets that Integrations and Environments refer to (labelled latchkey.dev/watch=true). */
  readonly referencedSecrets: ResourceCache<V1Secret>;
  private readonly logger: Logger;
  private readonly fieldManager: string;
  private readonly deriveStatus: KubeStoreOptions['deriveStatus'];
  /** The metadata-only view of `kc` and its client (sharded stores: the Connection identities). */
  private metadataClient: { kc: KubeConfig; custom: CustomObjectsApi } | undefined;
  private readonly scanPageSize: number;
  /** The watched namespaces (none: all). */
  private readonly namespaces: string[];
  /** One copy of each repeated string across every cache of this store. */
  private readonly strings = new StringPool();

  constructor(
    readonly kc: KubeConfig,
    opts: KubeStoreOptions,
  ) {
    this.logger = opts.logger.child({ component: 'store' });
    this.fieldManager = opts.fieldManager ?? 'latchkey';
    this.deriveStatus = opts.deriveStatus;
    this.scanPageSize = opts.scanPageSize ?? SCAN_PAGE;
    // Every typed client of this KubeConfig (the store's, the operation log's, the Events') reuses its connections.
    shareConnections(kc);
    this.custom = makeBoundedApiClient(kc, CustomObjectsApi);
    this.core = makeBoundedApiClient(kc, CoreV1Api);
    this.json = new KubeJsonApi(kc);
    const namespaces = (this.namespaces = opts.namespaces ?? []);
    this.providers = new ResourceCache([this.customInformer(PROVIDERS, undefined)]);
    this.providers.onChange(() => (this.providerAliases = undefined));
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
            (ns) => this.customInformer(CONNECTIONS, ns, { labelSelector: `${LABELS.shard}=${connectionShard}` }),
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

  private get caches(): Array<ConnectionCache<KubernetesObject>> {
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
    await Promise.all(this.caches.map((c) => c.start()));
    this.logger.info('caches synced');
  }

  async stop(): Promise<void> {
    await Promise.all([...this.caches.map((c) => c.stop()), ...this.connectionChanges.map((f) => f.stop())]);
    await this.json.close();
  }

  get hasSynced(): boolean {
    return this.caches.every((c) => c.hasSynced);
  }

  /** Every cache follows the API server now: false while a watch is down (an API server restart) until it resumes. */
  get isFresh(): boolean {
    return this.caches.every((c) => c.isFresh) && this.connectionChanges.every((f) => f.isFresh);
  }

  // ---- reads (informer caches) ----

  /**
   * A Provider by its name, or else by one of its `spec.aliases`. A name always wins over an alias;
   * two Providers claiming one alias: the first by name.
   */
  getProvider(name: string): ProviderResource | undefined {
    return this.providers.get(name) ?? this.providerByAlias(name);
  }

  private providerByAlias(alias: string): ProviderResource | undefined {
    let target = this.aliasIndex().get(alias);
    let found = target === undefined ? undefined : this.providers.get(target);
    if (target !== undefined && !found?.spec.aliases?.includes(alias)) {
      // A change the index has not seen yet (a write of ours still in the overlay): build it again.
      this.providerAliases = undefined;
      target = this.aliasIndex().get(alias);
      found = target === undefined ? undefined : this.providers.get(target);
    }
    return found;
  }

  /** alias -> provider name, built on first use after any Provider change. */
  private aliasIndex(): Map<string, string> {
    if (this.providerAliases) return this.providerAliases;
    const index = new Map<string, string>();
    const providers = this.providers.list().sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    for (const p of providers) for (const a of p.spec?.aliases ?? []) if (!index.has(a)) index.set(a, p.metadata.name);
    return (this.providerAliases = index);
  }

  listProviders(): ProviderResource[] {
    return this.providers.list();
  }

  getIntegration(namespace: string, name: string): IntegrationResource | undefined {
    return this.integrations.get(name, namespace);
  }

  listIntegrations(namespace: string): IntegrationResource[] {
    return this.integrations.list(namespace);
  }

  listEnvironments(namespace?: string): EnvironmentResource[] {
    return this.environments.list(namespace);
  }

  /** A Secret an Integration or Environment refers to (it must carry latchkey.dev/watch=true). */
  getReferencedSecret(namespace: string, name: string): V1Secret | undefined {
    return this.referencedSecrets.get(name, namespace);
  }

  /** Value of one key of a referenced Secret, decoded. */
  readSecretValue(namespace: string, name: string, key: string): string | undefined {
    const data = this.getReferencedSecret(namespace, name)?.data?.[key];
    return data === undefined ? undefined : Buffer.from(data, 'base64').toString('utf8');
  }

  /**
   * A connection with its credentials, from memory only: no API call, no promise. A Connection whose
   * Secret does not exist (yet, or any more) is not returned: creation writes both, and only both
   * together make a connection. A bounded store answers undefined for what it does not keep: the
   * server's paths ask this first and {@link findConnection} after a miss.
   */
  getConnection(namespace: string, integration: string, connectionId: string): StoredConnection | undefined {
    const name = connectionObjectName(integration, connectionId);
    const resource = this.connections.get(name, namespace);
    if (!resource || resource.spec.integration !== integration || resource.spec.connectionId !== connectionId) return undefined;
    return this.withCredentials(resource);
  }

  getConnectionByName(namespace: string, name: string): StoredConnection | undefined {
    const resource = this.connections.get(name, namespace);
    return resource ? this.withCredentials(resource) : undefined;
  }

  /**
   * Resolves at the next change of a connection or of its credentials Secret that this process
   * sees (watch event or own write), or after `timeoutMs`: how a caller waits for another
   * replica's refresh without polling the API server.
   */
  async whenConnectionChanges(namespace: string, name: string, timeoutMs: number): Promise<void> {
    const bound = new AbortController();
    const timer = setTimeout(() => bound.abort(), Math.max(0, timeoutMs));
    try {
      await Promise.race([
        this.credentialSecrets.whenChanged(name, namespace, bound.signal),
        this.connections.whenChanged(name, namespace, bound.signal),
      ]);
    } finally {
      clearTimeout(timer);
      bound.abort();
    }
  }

  /**
   * A connection with its credentials, from memory or else from the API server (a bounded store's
   * miss: the Connection and its Secret read together). The server's paths ask it after
   * {@link getConnection} missed (a hit here still costs a promise); the controller, whose caches hold
   * its whole share, asks {@link getConnection} alone.
   */
  async findConnection(namespace: string, integration: string, connectionId: string): Promise<StoredConnection | undefined> {
    const found = await this.findConnectionByName(namespace, connectionObjectName(integration, connectionId));
    if (!found || found.resource.spec.integration !== integration || found.resource.spec.connectionId !== connectionId) return undefined;
    return found;
  }

  async findConnectionByName(namespace: string, name: string): Promise<StoredConnection | undefined> {
    const { connections, credentialSecrets } = this;
    if (!(connections instanceof BoundedCache) || !(credentialSecrets instanceof BoundedCache))
      return this.getConnectionByName(namespace, name);
    const kept = connections.get(name, namespace);
    const keptSecret = kept && credentialSecrets.get(name, namespace);
    if (kept && keptSecret) return this.withCredentials(kept, keptSecret);
    const [resource, secret] = await Promise.all([connections.load(name, namespace), credentialSecrets.load(name, namespace)]);
    return resource && secret ? this.withCredentials(resource, secret) : undefined;
  }

  /**
   * The complete connections of a namespace (those whose credentials Secret exists), optionally only
   * those of some integrations or carrying some labels, one at a time: a bounded store reads them from
   * the API server page by page (label-selected), never holding more than a page.
   */
  async *scanConnections(namespace: string, select: ConnectionSelection = {}): AsyncGenerator<ConnectionResource> {
    const integrations = select.integrations?.filter(isLabelValue);
    if (select.integrations?.length && !integrations?.length) return; // no name a connection could carry
    const labels = Object.entries(select.labels ?? {});
    if (labels.some(([, v]) => !isLabelValue(v))) return;
    if (!this.bounded) {
      for (const c of this.listConnections(namespace)) {
        if (integrations?.length && !integrations.includes(c.spec.integration)) continue;
        if (labels.some(([k, v]) => c.metadata.labels?.[k] !== v)) continue;
        yield c;
      }
      return;
    }
    const selector = [
      ...(integrations?.length ? [`${LABELS.integration} in (${integrations.join(',')})`] : []),
      ...labels.map(([k, v]) => `${k}=${v}`),
    ].join(',');
    let next: string | undefined;
    do {
      const page = await this.json.get<KubernetesListObject<ConnectionResource> & { metadata?: { continue?: string } }>(
        apiPath(`/apis/${GROUP}/${VERSION}/namespaces`, namespace, CONNECTIONS.plural),
        {
          query: {
            limit: String(this.scanPageSize),
            ...(selector ? { labelSelector: selector } : {}),
            ...(next ? { continue: next } : {}),
          },
        },
      );
      for (const c of page.items ?? []) {
        // A status the owner wrote says the Secret was there; one never written is checked.
        if (c.status?.updatedAt) yield c;
        else {
          const complete = await this.findConnectionByName(namespace, c.metadata.name);
          if (complete) yield complete.resource;
        }
      }
      next = page.metadata?.continue || undefined;
    } while (next);
  }

  /** Complete connections of a namespace (those whose credentials Secret exists); not in a bounded store ({@link scanConnections}). */
  listConnections(namespace: string): ConnectionResource[] {
    const { connections, credentialSecrets } = this.watched;
    const out: ConnectionResource[] = [];
    for (const c of connections.list(namespace)) {
      const secret = credentialSecrets.get(c.metadata.name, namespace);
      if (!secret) continue;
      if (!this.deriveStatus || c.status?.updatedAt) out.push(c);
      else out.push(this.withCredentials(c)?.resource ?? c);
    }
    return out;
  }

  /**
   * The identity of every Connection of every watched namespace, complete or not (for the controller),
   * each handed to `visit` as it arrives: a store that caches every Connection walks its cache, a
   * sharded one reads them from the API server as metadata, a page at a time, and keeps none.
   */
  async scanConnectionIdentities(visit: (c: ConnectionIdentity) => void): Promise<void> {
    if (this.connectionIndex) {
      for (const c of this.connectionIndex.list()) visit(c);
      return;
    }
    const { custom } = this.metadataView();
    for (const namespace of this.namespaces.length ? this.namespaces : [undefined]) {
      let next: string | undefined;
      do {
        const base = { group: GROUP, version: VERSION, plural: CONNECTIONS.plural, limit: this.scanPageSize, _continue: next };
        const page = (
          namespace ? await custom.listNamespacedCustomObject({ ...base, namespace }) : await custom.listClusterCustomObject(base)
        ) as KubernetesListObject<ConnectionIdentity> & { metadata?: { continue?: string } };
        for (const c of page.items ?? []) {
          toIdentity(c);
          visit(c);
        }
        next = page.metadata?.continue || page.metadata?._continue || undefined;
      } while (next);
    }
  }

  /** The identity of one Connection this store caches (whole, or in its index). */
  connectionIdentity(namespace: string, name: string): ConnectionIdentity | undefined {
    return this.connectionIndex?.get(name, namespace) ?? this.connections.get(name, namespace);
  }

  /** The identity of one Connection, from the API server when this store does not cache it. */
  async findConnectionIdentity(namespace: string, name: string): Promise<ConnectionIdentity | undefined> {
    if (this.connections instanceof BoundedCache) return this.connections.load(name, namespace);
    if (this.connectionIndex) return this.connectionIndex.get(name, namespace);
    const cached = this.connections.get(name, namespace);
    if (cached) return cached;
    try {
      return await this.readConnection(namespace, name);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private withCredentials(
    resource: ConnectionResource,
    secret = this.credentialSecrets.get(resource.metadata.name, resource.metadata.namespace),
  ): StoredConnection | undefined {
    if (!secret || !isOwnedBy(secret, resource)) return undefined;
    const credentials = decodedOnce(secret);
    if (!credentials) return undefined;
    // One object per Connection and Secret version, like the decoded credentials: repeated reads
    // allocate nothing, and what is built from it can be kept per object (the fetch's answer text).
    const known = stored.get(resource);
    if (known?.credentials === credentials) return known;
    // Never written since creation: the fields the credentials determine, as the owner will write them.
    const derived =
      this.deriveStatus && !resource.status?.updatedAt
        ? { ...resource, status: { ...this.deriveStatus(resource, credentials), ...resource.status } }
        : resource;
    const connection = { resource: derived, credentials, credentialsVersion: secret.metadata!.resourceVersion! };
    stored.set(resource, connection);
    return connection;
  }

  /**
   * Writes the shard label (the controller replica that owns the connection) on a Connection and
   * its credentials Secret, both at once, each in one request: a JSON merge patch of the label alone
   * (a taken-over Connection is not cached whole and its Secret is not in this replica's
   * label-selected cache: a read-then-update cost two round trips each, on the path of a take-over).
   * The Connection's patch carries the resourceVersion of its cached identity, so it is still a
   * compare-and-swap (a conflict falls back to read-and-update); the Secret's touches nothing but the
   * label. Returns whether the Secret exists (a creation may still be writing it).
   */
  async labelShard(namespace: string, name: string, shard: string, known?: ConnectionIdentity): Promise<{ secret: boolean }> {
    const identity = known ?? (await this.findConnectionIdentity(namespace, name));
    const labelConnection = async (): Promise<boolean> => {
      if (identity?.metadata.labels?.[LABELS.shard] === shard) return true;
      const version = identity?.metadata.resourceVersion;
      const request = { group: GROUP, version: VERSION, namespace, plural: CONNECTIONS.plural, name, fieldManager: this.fieldManager };
      const body = { metadata: { labels: { [LABELS.shard]: shard }, resourceVersion: version, managedFields: RESET_MANAGED_FIELDS } };
      try {
        // Changed since the cached identity (a conflict), or none cached: read and update instead.
        const patched = version
          ? await this.custom.patchNamespacedCustomObject({ ...request, body }, MERGE_PATCH).catch((err: unknown) => {
              if (isConflict(err)) return undefined;
              throw err;
            })
          : undefined;
        if (patched) this.connections.remember(patched as ConnectionResource);
        else
          await this.updateConnection(namespace, name, (c) =>
            c.metadata.labels?.[LABELS.shard] === shard
              ? undefined
              : { ...c, metadata: { ...c.metadata, labels: { ...c.metadata.labels, [LABELS.shard]: shard } } },
          );
        return true;
      } catch (err) {
        if (isNotFound(err) || hasCode(err, OBJECT_NOT_FOUND)) return false;
        throw err;
      }
    };
    const labelSecret = async (): Promise<boolean> => {
      if (this.credentialSecrets.get(name, namespace)?.metadata?.labels?.[LABELS.shard] === shard) return true;
      try {
        const body = { metadata: { labels: { [LABELS.shard]: shard }, managedFields: RESET_MANAGED_FIELDS } };
        const secret = await this.core.patchNamespacedSecret({ namespace, name, body, fieldManager: this.fieldManager }, MERGE_PATCH);
        this.credentialSecrets.remember(secret);
        return true;
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
    };
    const [connection, secret] = await Promise.all([labelConnection(), labelSecret()]);
    return { secret: connection && secret };
  }

  // ---- connection writes ----

  /**
   * Creates a Connection and then its credentials Secret, owned by the Connection. If the Secret
   * cannot be written the Connection is deleted again; a process that dies in between leaves a
   * Connection without a Secret, which reads ignore and {@link sweepIncompleteConnections} removes.
   */
  async createConnection(input: NewConnection): Promise<StoredConnection> {
    const { namespace } = input;
    const name = connectionObjectName(input.spec.integration, input.spec.connectionId);
    const body: ConnectionResource = {
      apiVersion: API_VERSION,
      kind: CONNECTIONS.kind,
      metadata: { name, namespace, labels: { ...input.labels, [LABELS.integration]: input.spec.integration } },
      spec: { ...input.spec, id: input.spec.id ?? randomInt(1, 2 ** 48 - 1) },
    };
    let created = await createCustomObject(
      this.custom,
      { namespace, plural: CONNECTIONS.plural, fieldManager: this.fieldManager },
      body,
      `connection ${input.spec.connectionId}`,
    );
    this.connections.remember(created);
    try {
      const secret = await this.core.createNamespacedSecret({
        namespace,
        body: credentialsSecret(created, input.credentials),
        fieldManager: this.fieldManager,
      });
      this.credentialSecrets.remember(secret);
      if (input.status && !this.deriveStatus) {
        created = await this.updateConnectionStatus(namespace, name, ConnectionStatusWriter.Service, (s) => ({ ...s, ...input.status }));
      }
      const resource = this.deriveStatus
        ? { ...created, status: { ...this.deriveStatus(created, input.credentials), ...created.status } }
        : created;
      return { resource, credentials: input.credentials, credentialsVersion: secret.metadata!.resourceVersion! };
    } catch (err) {
      this.logger.warn({ namespace, name, err: apiMessage(err) }, 'credentials Secret not written; removing the connection');
      await this.deleteConnectionObject(namespace, name, created.metadata.uid).catch(() => undefined);
      throw err;
    }
  }

  /** Compare-and-swap update of a connection's spec (and labels/annotations). */
  async updateConnection(
    namespace: string,
    name: string,
    mutate: (current: ConnectionResource) => ConnectionResource | undefined,
  ): Promise<ConnectionResource> {
    return this.casConnection(namespace, name, mutate, false);
  }

  /**
   * Compare-and-swap update of a connection's status subresource by `writer`, which may change only
   * the fields it owns (src/domain/connection-status-writers.ts); any other change is refused unwritten.
   */
  async updateConnectionStatus(
    namespace: string,
    name: string,
    writer: ConnectionStatusWriter,
    mutate: (current: ConnectionStatus) => ConnectionStatus | undefined,
  ): Promise<ConnectionResource> {
    return this.casConnection(
      namespace,
      name,
      (current) => {
        const before = current.status ?? {};
        const status = mutate(structuredClone(before));
        if (status === undefined) return undefined;
        const stray = fieldsNotOwned(writer, before, status);
        if (stray.length)
          throw new LatchkeyError(
            'internal',
            'status_field_not_owned',
            `${writer} may not write status.${stray.join(', status.')} of a Connection`,
          );
        return { ...current, status };
      },
      true,
    );
  }

  /** Compare-and-swap write of a Connection (or of its status subresource), remembered by this process's reads. */
  private async casConnection(
    namespace: string,
    name: string,
    mutate: (current: ConnectionResource) => ConnectionResource | undefined,
    status: boolean,
  ): Promise<ConnectionResource> {
    let written: ConnectionResource | undefined;
    const result = await compareAndSwap<ConnectionResource>({
      what: `connection ${status ? 'status ' : ''}${namespace}/${name}`,
      readCached: () => this.connections.get(name, namespace),
      readFresh: () => this.readConnection(namespace, name),
      mutate,
      write: async (body) =>
        (written = await this.json.put<ConnectionResource>(`${connectionPath(namespace, name)}${status ? '/status' : ''}`, body, {
          fieldManager: this.fieldManager,
        })),
    });
    // Only a write is remembered: a change found unneeded (every reconcile of an unchanged connection)
    // left an overlay entry per connection that outlived the reconcile (a resync: one per owned connection).
    if (written) this.connections.remember(result);
    return result;
  }

  /**
   * Compare-and-swap update of a connection's credentials. `mutate` gets the stored credentials and
   * returns the new ones (or undefined to keep them). On a conflict it is called again with what the
   * API server holds now, so a concurrent writer's change is never overwritten unseen.
   */
  async updateCredentials(
    namespace: string,
    name: string,
    mutate: (current: StoredCredentials) => StoredCredentials | undefined,
  ): Promise<{ credentials: StoredCredentials; credentialsVersion: string }> {
    const secret = await compareAndSwap<V1Secret>({
      what: `credentials ${namespace}/${name}`,
      readCached: () => this.credentialSecrets.get(name, namespace),
      readFresh: () => this.json.get<V1Secret>(secretPath(namespace, name)),
      mutate: (current) => {
        const existing = decodeCredentials(current);
        if (!existing) throw objectNotFound(`credentials of ${namespace}/${name}`);
        const next = mutate(existing);
        if (next === undefined) return undefined;
        return { ...current, data: { ...current.data, [CREDENTIALS_KEY]: encode(next) } };
      },
      write: (next) =>
        this.json.put<V1Secret>(
          secretPath(namespace, name),
          { apiVersion: 'v1', kind: 'Secret', ...next },
          { fieldManager: this.fieldManager },
        ),
    });
    this.credentialSecrets.remember(secret);
    return { credentials: decodeCredentials(secret)!, credentialsVersion: secret.metadata!.resourceVersion! };
  }

  /**
   * Reads a connection's credentials Secret from the API server (not the cache) and keeps it in the
   * cache when it is newer there: what a refresh holding the connection's lock starts from, since this
   * process's watch may not have brought the last refresh's write yet. Returns the resourceVersion read,
   * or undefined when the Secret is gone.
   */
  async readCredentialsVersion(namespace: string, name: string): Promise<string | undefined> {
    let secret: V1Secret;
    try {
      secret = await this.json.get<V1Secret>(secretPath(namespace, name));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    // Into the cache unless a write of ours answered meanwhile is newer (remember() keeps the newer).
    this.credentialSecrets.remember(secret);
    return secret.metadata?.resourceVersion;
  }

  /** Deletes a Connection; the garbage collector deletes its Secret and anything else it owns. */
  async deleteConnection(namespace: string, name: string): Promise<void> {
    const current = this.connections.get(name, namespace);
    await this.deleteConnectionObject(namespace, name, current?.metadata.uid);
    const secret = this.credentialSecrets.get(name, namespace);
    this.credentialSecrets.forget(name, namespace, secret?.metadata?.resourceVersion);
  }

  private async deleteConnectionObject(namespace: string, name: string, uid: string | undefined): Promise<void> {
    await deleteCustomObject(this.custom, { namespace, plural: CONNECTIONS.plural, name }, uid);
    this.connections.forget(name, namespace, this.connections.get(name, namespace)?.metadata.resourceVersion);
  }

  /**
   * Deletes Connections whose credentials Secret never came to exist (their creator died between the
   * two writes). Only objects older than `olderThanMs` are touched, so creations in flight are left alone.
   */
  async sweepIncompleteConnections(olderThanMs: number, now = Date.now(), owns: (key: string) => boolean = () => true): Promise<string[]> {
    const removed: string[] = [];
    // A sharded store's share: every Connection it owns is labelled for it (Secret or not) and so cached whole.
    for (const c of this.connectionIndex?.list() ?? this.watched.connections.list()) {
      const ns = c.metadata.namespace!;
      if (!owns(`${ns}/${c.metadata.name}`)) continue;
      if (await this.removeIfIncomplete(c, olderThanMs, now)) removed.push(`${ns}/${c.metadata.name}`);
    }
    return removed;
  }

  /**
   * The same for one Connection: an import that meets its own earlier, half-made attempt (the API
   * server went away between the two writes) clears it instead of waiting for the sweeper. True when removed.
   */
  async removeIncompleteConnection(namespace: string, name: string, olderThanMs: number, now = Date.now()): Promise<boolean> {
    const c = await this.findConnectionIdentity(namespace, name);
    return c ? this.removeIfIncomplete(c, olderThanMs, now) : false;
  }

  private async removeIfIncomplete(c: ConnectionIdentity, olderThanMs: number, now: number): Promise<boolean> {
    const ns = c.metadata.namespace!;
    const created = Date.parse(c.metadata.creationTimestamp as unknown as string);
    if (now - created < olderThanMs || this.credentialSecrets.get(c.metadata.name, ns)) return false;
    // The cache may lag (or, bounded, not hold it): confirm with the API server before deleting.
    try {
      await this.core.readNamespacedSecret({ namespace: ns, name: c.metadata.name });
      return false;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    this.logger.warn({ namespace: ns, name: c.metadata.name }, 'removing connection whose credentials were never written');
    await this.deleteConnectionObject(ns, c.metadata.name, c.metadata.uid);
    return true;
  }

  private async readConnection(namespace: string, name: string): Promise<ConnectionResource> {
    return this.json.get<ConnectionResource>(connectionPath(namespace, name));
  }

  /**
   * Sets (or with `undefined` removes) one annotation of an Integration, compare-and-swap. Annotations
   * do not bump the generation, so the Integration's spec stays the operator's.
   */
  async annotateIntegration(namespace: string, name: string, key: string, value: string | undefined): Promise<IntegrationResource> {
    const base = { group: GROUP, version: VERSION, plural: INTEGRATIONS.plural, namespace, name };
    const result = await compareAndSwap<IntegrationResource>({
      what: `integration ${namespace}/${name}`,
      readCached: () => this.integrations.get(name, namespace),
      readFresh: async () => (await this.custom.getNamespacedCustomObject(base)) as IntegrationResource,
      mutate: (current) => {
        const annotations = { ...current.metadata.annotations };
        if (annotations[key] === value) return undefined;
        if (value === undefined) delete annotations[key];
        else annotations[key] = value;
        return { ...current, metadata: { ...current.metadata, annotations } };
      },
      write: async (next) =>
        (await this.custom.replaceNamespacedCustomObject({ ...base, body: next, fieldManager: this.fieldManager })) as IntegrationResource,
    });
    this.integrations.remember(result);
    return result;
  }

  // ---- status of the other kinds ----

  /** Compare-and-swap update of the status of a Provider, Integration or Environment. */
  async updateStatus<T extends KubernetesObject & { status?: CommonStatus }>(
    kind: Kind<T>,
    namespace: string | undefined,
    name: string,
    mutate: (current: CommonStatus) => CommonStatus | undefined,
  ): Promise<T> {
    // A Connection's status has its own writers and fields (updateConnectionStatus).
    if (kind.plural === CONNECTIONS.plural)
      throw new LatchkeyError('internal', 'status_field_not_owned', 'Connection status is written through updateConnectionStatus');
    const cache = this.cacheOf(kind) as ResourceCache<T>;
    const base = { group: GROUP, version: VERSION, plural: kind.plural, name };
    const result = await compareAndSwap<T>({
      what: `${kind.kind} status ${namespace ?? ''}/${name}`,
      readCached: () => cache.get(name, namespace),
      readFresh: async () =>
        (namespace
          ? await this.custom.getNamespacedCustomObject({ ...base, namespace })
          : await this.custom.getClusterCustomObject(base)) as T,
      mutate: (current) => {
        const status = mutate(structuredClone(current.status ?? {}));
        return status === undefined ? undefined : { ...current, status };
      },
      write: async (next) =>
        (namespace
          ? await this.custom.replaceNamespacedCustomObjectStatus({ ...base, namespace, body: next, fieldManager: this.fieldManager })
          : await this.custom.replaceClusterCustomObjectStatus({ ...base, body: next, fieldManager: this.fieldManager })) as T,
    });
    cache.remember(result);
    return result;
  }

  private cacheOf(kind: Kind<KubernetesObject>): ResourceCache<KubernetesObject> {
    switch (kind.plural) {
      case PROVIDERS.plural:
        return this.providers;
      case INTEGRATIONS.plural:
        return this.integrations;
      case ENVIRONMENTS.plural:
        return this.environments;
      default:
        throw new Error(`unknown kind ${kind.kind}`);
    }
  }

  // ---- informers ----

  private customInformer<T extends KubernetesObject>(
    kind: Kind<T>,
    namespace: string | undefined,
    { labelSelector, kc = this.kc, custom = this.custom, reduce }: CustomInformerOptions<T> = {},
  ): ResilientInformer<T> {
    const path = namespace
      ? `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${kind.plural}`
      : `/apis/${GROUP}/${VERSION}/${kind.plural}`;
    const listPage = async (limit: number, _continue: string | undefined) =>
      (namespace
        ? await custom.listNamespacedCustomObject({
            group: GROUP,
            version: VERSION,
            namespace,
            plural: kind.plural,
            labelSelector,
            limit,
            _continue,
          })
        : await custom.listClusterCustomObject({
            group: GROUP,
            version: VERSION,
            plural: kind.plural,
            labelSelector,
            limit,
            _continue,
          })) as KubernetesListObject<T>;
    return new ResilientInformer<T>({ kc, path, listPage, labelSelector, reduce, logger: this.logger, strings: this.strings });
  }

  /**
   * A bounded cache of one collection (Connections, or credentials Secrets selected by `labelSelector`):
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
        try {
          const obj = await this.json.get<T>(`${collection(namespace)}/${encodeURIComponent(name)}`);
          return selects(obj) ? obj : undefined;
        } catch (err) {
          if (isNotFound(err)) return undefined;
          throw err;
        }
      },
      shape: (obj) => {
        dropManagedFields(obj);
        internStrings(obj, this.strings, SECRET_VALUES);
      },
    });
  }

  private metadataView(): { kc: KubeConfig; custom: CustomObjectsApi } {
    if (!this.metadataClient) {
      const kc = metadataOnly(this.kc);
      this.metadataClient = { kc, custom: makeBoundedApiClient(kc, CustomObjectsApi) };
    }
    return this.metadataClient;
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

  private secretInformer(namespace: string | undefined, labelSelector: string): ResilientInformer<V1Secret> {
    const path = namespace ? `/api/v1/namespaces/${namespace}/secrets` : '/api/v1/secrets';
    const listPage = (limit: number, _continue: string | undefined) =>
      namespace
        ? this.core.listNamespacedSecret({ namespace, labelSelector, limit, _continue })
        : this.core.listSecretForAllNamespaces({ labelSelector, limit, _continue });
    return new ResilientInformer<V1Secret>({
      kc: this.kc,
      path,
      listPage,
      labelSelector,
      logger: this.logger,
      strings: this.strings,
      unpooledKeys: SECRET_VALUES,
    });
  }
}

/** Which connections {@link KubeStore.scanConnections} goes through: all unless narrowed. */
export interface ConnectionSelection {
  /** Only these integrations' (any of them). */
  integrations?: string[];
  /** Only those carrying every one of these labels. */
  labels?: Record<string, string>;
}

/** Connections a bounded store's scan reads per request to the API server. */
const SCAN_PAGE = 500;

/** A valid label value: anything else could not be on a connection, and must not reach a label selector. */
const isLabelValue = (v: string) => v.length <= 63 && /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/.test(v) && v !== '';

const connectionCollection = (namespace: string | undefined) =>
  namespace
    ? apiPath(`/apis/${GROUP}/${VERSION}/namespaces`, namespace, CONNECTIONS.plural)
    : `/apis/${GROUP}/${VERSION}/${CONNECTIONS.plural}`;
const secretCollection = (namespace: string | undefined) =>
  namespace ? apiPath('/api/v1/namespaces', namespace, 'secrets') : '/api/v1/secrets';

interface CustomInformerOptions<T extends KubernetesObject> {
  labelSelector?: string;
  /** The client configuration and API the list-watch goes through (a metadata-only view, say). */
  kc?: KubeConfig;
  custom?: CustomObjectsApi;
  reduce?(obj: T): void;
}

/**
 * Cuts a Connection's metadata down to its identity, in place. One shape for every object (absent
 * fields are undefined, not missing): the index holds one per Connection of the cluster.
 */
function toIdentity(obj: ConnectionIdentity): void {
  const m = obj.metadata;
  const shard = m.labels?.[LABELS.shard];
  obj.metadata = {
    name: m.name,
    namespace: m.namespace,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
    creationTimestamp: m.creationTimestamp,
    deletionTimestamp: m.deletionTimestamp,
    labels: shard === undefined ? undefined : { [LABELS.shard]: shard },
  };
}

/** A connection's credentials Secret as the store creates it (benchmarks write the same shape). */
export function credentialsSecret(owner: ConnectionResource, credentials: StoredCredentials): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: CREDENTIALS_SECRET_TYPE,
    metadata: {
      name: owner.metadata.name,
      namespace: owner.metadata.namespace,
      labels: {
        [LABELS.managedBy]: LABELS.managedByValue,
        [LABELS.integration]: owner.spec.integration,
      },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: CONNECTIONS.kind,
          name: owner.metadata.name,
          uid: owner.metadata.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    data: { [CREDENTIALS_KEY]: encode(credentials) },
  };
}

function isOwnedBy(secret: V1Secret, owner: ConnectionResource): boolean {
  return (secret.metadata?.ownerReferences ?? []).some((r) => r.uid === owner.metadata.uid);
}

/**
 * The Secret's value: never more than a Secret holds (`fitCredentials`: `raw` trimmed, oversized
 * refused), each token once (`toStoredForm`).
 */
function encode(credentials: StoredCredentials): string {
  return Buffer.from(JSON.stringify(toStoredForm(fitCredentials(credentials))), 'utf8').toString('base64');
}

/**
 * Decoded credentials per cached Secret object. The cache holds one object per resourceVersion (a
 * change replaces it), so this is a cache per resourceVersion that goes with the object: the hot
 * read path (every fetch and proxied request) skips base64 and JSON. Callers never mutate them.
 */
const decoded = new WeakMap<V1Secret, StoredCredentials | null>();

/** The stored connection last built per cached Connection object (valid while its Secret's credentials are the same object). */
const stored = new WeakMap<ConnectionResource, StoredConnection>();

function decodedOnce(secret: V1Secret): StoredCredentials | undefined {
  let credentials = decoded.get(secret);
  if (credentials === undefined) {
    credentials = decodeCredentials(secret) ?? null;
    decoded.set(secret, credentials);
  }
  return credentials ?? undefined;
}

function decodeCredentials(secret: V1Secret): StoredCredentials | undefined {
  const raw = secret.data?.[CREDENTIALS_KEY];
  if (!raw) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(raw, 'base64').toString('utf8')) as unknown;
    if (parsed && typeof parsed === 'object' && typeof (parsed as { type?: unknown }).type === 'string') {
      return fromStoredForm(parsed as StoredCredentials);
    }
  } catch {
    // fall through: a Secret someone edited by hand into something unreadable
  }
  return undefined;
}

const connectionPath = (namespace: string, name: string) =>
  apiPath(`/apis/${GROUP}/${VERSION}/namespaces`, namespace, CONNECTIONS.plural, name);
const secretPath = (namespace: string, name: string) => apiPath('/api/v1/namespaces', namespace, 'secrets', name);
