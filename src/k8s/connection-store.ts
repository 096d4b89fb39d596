import { LatchkeyError } from '../domain/errors.js';
import { ConnectionStatusWriter, fieldsNotOwned } from '../domain/connection-status-writers.js';
import { randomInt } from 'node:crypto';
import type { V1Secret } from './kubernetes-client.js';
import { compareAndSwap } from './cas.js';
import { apiMessage, isNotFound, objectNotFound, readOrUndefined } from './errors.js';
import { BoundedCache } from './bounded-cache.js';
import { connectionObjectName } from './names.js';
import { createCustomObject, deleteCustomObject } from './custom-objects.js';
import {
  connectionPath,
  credentialsSecret,
  decodeCredentials,
  decodedOnce,
  encodeCredentials,
  isOwnedBy,
  secretPath,
  type NewConnection,
  type StoredConnection,
  type StoredCredentials,
} from './credentials-secret.js';
import {
  API_VERSION,
  CONNECTIONS,
  CREDENTIALS_KEY,
  LABELS,
  type ConnectionIdentity,
  type ConnectionResource,
  type ConnectionStatus,
} from './resources.js';
import type { StoreCaches } from './store-caches.js';

/** The stored connection last built per cached Connection object (valid while its Secret's credentials are the same object). */
const stored = new WeakMap<ConnectionResource, StoredConnection>();

/**
 * Connections and their credentials: reads from the caches (or, for a bounded store's miss, the API
 * server) and compare-and-swap writes on resourceVersion, retried on conflict and remembered by this
 * process's reads. Many connections at a time: ./connection-scans.ts.
 */
export class ConnectionStore {
  constructor(private readonly caches: StoreCaches) {}

  /**
   * A connection with its credentials, from memory only: no API call, no promise. A Connection whose
   * Secret does not exist (yet, or any more) is not returned: creation writes both, and only both
   * together make a connection. A bounded store answers undefined for what it does not keep: the
   * server's paths ask this first and {@link findConnection} after a miss.
   */
  getConnection(namespace: string, integration: string, connectionId: string): StoredConnection | undefined {
    const name = connectionObjectName(integration, connectionId);
    const resource = this.caches.connections.get(name, namespace);
    if (!resource || resource.spec.integration !== integration || resource.spec.connectionId !== connectionId) return undefined;
    return this.withCredentials(resource);
  }

  getConnectionByName(namespace: string, name: string): StoredConnection | undefined {
    const resource = this.caches.connections.get(name, namespace);
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
        this.caches.credentialSecrets.whenChanged(name, namespace, bound.signal),
        this.caches.connections.whenChanged(name, namespace, bound.signal),
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
    const { connections, credentialSecrets } = this.caches;
    if (!(connections instanceof BoundedCache) || !(credentialSecrets instanceof BoundedCache))
      return this.getConnectionByName(namespace, name);
    const kept = connections.get(name, namespace);
    const keptSecret = kept && credentialSecrets.get(name, namespace);
    if (kept && keptSecret) return this.withCredentials(kept, keptSecret);
    const [resource, secret] = await Promise.all([connections.load(name, namespace), credentialSecrets.load(name, namespace)]);
    return resource && secret ? this.withCredentials(resource, secret) : undefined;
  }

  /** The Connection as cached, whether or not its credentials Secret exists (the controller's reconcile). */
  connectionResource(namespace: string, name: string): ConnectionResource | undefined {
    return this.caches.connections.get(name, namespace);
  }

  /** The identity of one Connection this store caches (whole, or in its index). */
  connectionIdentity(namespace: string, name: string): ConnectionIdentity | undefined {
    return this.caches.connectionIndex?.get(name, namespace) ?? this.caches.connections.get(name, namespace);
  }

  /** The identity of one Connection, from the API server when this store does not cache it. */
  async findConnectionIdentity(namespace: string, name: string): Promise<ConnectionIdentity | undefined> {
    const { connections, connectionIndex } = this.caches;
    if (connections instanceof BoundedCache) return connections.load(name, namespace);
    if (connectionIndex) return connectionIndex.get(name, namespace);
    const cached = connections.get(name, namespace);
    if (cached) return cached;
    return readOrUndefined(() => this.readConnection(namespace, name));
  }

  /** The Connection with its credentials (and, never written since creation, the status they determine); undefined without its Secret. */
  withCredentials(
    resource: ConnectionResource,
    secret = this.caches.credentialSecrets.get(resource.metadata.name, resource.metadata.namespace),
  ): StoredConnection | undefined {
    if (!secret || !isOwnedBy(secret, resource)) return undefined;
    const credentials = decodedOnce(secret);
    if (!credentials) return undefined;
    // One object per Connection and Secret version, like the decoded credentials: repeated reads
    // allocate nothing, and what is built from it can be kept per object (the fetch's answer text).
    const known = stored.get(resource);
    if (known?.credentials === credentials) return known;
    // Never written since creation: the fields the credentials determine, as the owner will write them.
    const { deriveStatus } = this.caches;
    const derived =
      deriveStatus && !resource.status?.updatedAt
        ? { ...resource, status: { ...deriveStatus(resource, credentials), ...resource.status } }
        : resource;
    const connection = { resource: derived, credentials, credentialsVersion: secret.metadata!.resourceVersion! };
    stored.set(resource, connection);
    return connection;
  }

  // ---- writes ----

  /**
   * Creates a Connection and then its credentials Secret, owned by the Connection. If the Secret
   * cannot be written the Connection is deleted again; a process that dies in between leaves a
   * Connection without a Secret, which reads ignore and the sweeper removes (./connection-upkeep.ts).
   */
  async createConnection(input: NewConnection): Promise<StoredConnection> {
    const { custom, core, fieldManager, deriveStatus, connections, credentialSecrets } = this.caches;
    const { namespace } = input;
    const name = connectionObjectName(input.spec.integration, input.spec.connectionId);
    const body: ConnectionResource = {
      apiVersion: API_VERSION,
      kind: CONNECTIONS.kind,
      metadata: { name, namespace, labels: { ...input.labels, [LABELS.integration]: input.spec.integration } },
      spec: { ...input.spec, id: input.spec.id ?? randomInt(1, 2 ** 48 - 1) },
    };
    const target = { namespace, plural: CONNECTIONS.plural, fieldManager };
    let created = await createCustomObject(custom, target, body, `connection ${input.spec.connectionId}`);
    connections.remember(created);
    try {
      const secret = await core.createNamespacedSecret({ namespace, body: credentialsSecret(created, input.credentials), fieldManager });
      credentialSecrets.remember(secret);
      if (input.status && !deriveStatus) {
        created = await this.updateConnectionStatus(namespace, name, ConnectionStatusWriter.Service, (s) => ({ ...s, ...input.status }));
      }
      const resource = deriveStatus ? { ...created, status: { ...deriveStatus(created, input.credentials), ...created.status } } : created;
      return { resource, credentials: input.credentials, credentialsVersion: secret.metadata!.resourceVersion! };
    } catch (err) {
      this.caches.logger.warn({ namespace, name, err: apiMessage(err) }, 'credentials Secret not written; removing the connection');
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
    const guarded = (current: ConnectionResource) => {
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
    };
    return this.casConnection(namespace, name, guarded, true);
  }

  /** Compare-and-swap write of a Connection (or of its status subresource), remembered by this process's reads. */
  private async casConnection(
    namespace: string,
    name: string,
    mutate: (current: ConnectionResource) => ConnectionResource | undefined,
    status: boolean,
  ): Promise<ConnectionResource> {
    const { json, fieldManager, connections } = this.caches;
    let written: ConnectionResource | undefined;
    const result = await compareAndSwap<ConnectionResource>({
      what: `connection ${status ? 'status ' : ''}${namespace}/${name}`,
      readCached: () => connections.get(name, namespace),
      readFresh: () => this.readConnection(namespace, name),
      mutate,
      write: async (body) =>
        (written = await json.put<ConnectionResource>(`${connectionPath(namespace, name)}${status ? '/status' : ''}`, body, {
          fieldManager,
        })),
    });
    // Only a write is remembered: a change found unneeded (every reconcile of an unchanged connection)
    // left an overlay entry per connection that outlived the reconcile (a resync: one per owned connection).
    if (written) connections.remember(result);
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
    const { json, fieldManager, credentialSecrets } = this.caches;
    const secret = await compareAndSwap<V1Secret>({
      what: `credentials ${namespace}/${name}`,
      readCached: () => credentialSecrets.get(name, namespace),
      readFresh: () => json.get<V1Secret>(secretPath(namespace, name)),
      mutate: (current) => {
        const existing = decodeCredentials(current);
        if (!existing) throw objectNotFound(`credentials of ${namespace}/${name}`);
        const next = mutate(existing);
        if (next === undefined) return undefined;
        return { ...current, data: { ...current.data, [CREDENTIALS_KEY]: encodeCredentials(next) } };
      },
      write: (next) => json.put<V1Secret>(secretPath(namespace, name), { apiVersion: 'v1', kind: 'Secret', ...next }, { fieldManager }),
    });
    credentialSecrets.remember(secret);
    return { credentials: decodeCredentials(secret)!, credentialsVersion: secret.metadata!.resourceVersion! };
  }

  /**
   * Reads a connection's credentials Secret from the API server (not the cache) and keeps it in the
   * cache when it is newer there: what a refresh holding the connection's lock starts from, since this
   * process's watch may not have brought the last refresh's write yet. Returns the resourceVersion read,
   * or undefined when the Secret is gone.
   */
  async readCredentialsVersion(namespace: string, name: string): Promise<string | undefined> {
    const secret = await readOrUndefined(() => this.caches.json.get<V1Secret>(secretPath(namespace, name)));
    if (secret === undefined) return undefined;
    // Into the cache unless a write of ours answered meanwhile is newer (remember() keeps the newer).
    this.caches.credentialSecrets.remember(secret);
    return secret.metadata?.resourceVersion;
  }

  /** Deletes a Connection; the garbage collector deletes its Secret and anything else it owns. */
  async deleteConnection(namespace: string, name: string): Promise<void> {
    const { connections, credentialSecrets } = this.caches;
    await this.deleteConnectionObject(namespace, name, connections.get(name, namespace)?.metadata.uid);
    credentialSecrets.forget(name, namespace, credentialSecrets.get(name, namespace)?.metadata?.resourceVersion);
  }

  /**
   * Deletes a Connection whose credentials Secret never came to exist (its creator died between the
   * two writes), only when older than `olderThanMs` (creations in flight are left alone): an import
   * that meets its own earlier, half-made attempt clears it instead of waiting for the sweeper. True when removed.
   */
  async removeIncompleteConnection(
    namespace: string,
    name: string,
    olderThanMs: number,
    now = Date.now(),
    known?: ConnectionIdentity,
  ): Promise<boolean> {
    const c = known ?? (await this.findConnectionIdentity(namespace, name));
    if (!c) return false;
    const created = Date.parse(c.metadata.creationTimestamp as unknown as string);
    if (now - created < olderThanMs || this.caches.credentialSecrets.get(name, namespace)) return false;
    // The cache may lag (or, bounded, not hold it): confirm with the API server before deleting.
    try {
      await this.caches.core.readNamespacedSecret({ namespace, name });
      return false;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    this.caches.logger.warn({ namespace, name }, 'removing connection whose credentials were never written');
    await this.deleteConnectionObject(namespace, name, c.metadata.uid);
    return true;
  }

  private async deleteConnectionObject(namespace: string, name: string, uid: string | undefined): Promise<void> {
    const { custom, connections } = this.caches;
    await deleteCustomObject(custom, { namespace, plural: CONNECTIONS.plural, name }, uid);
    connections.forget(name, namespace, connections.get(name, namespace)?.metadata.resourceVersion);
  }

  private async readConnection(namespace: string, name: string): Promise<ConnectionResource> {
    return this.caches.json.get<ConnectionResource>(connectionPath(namespace, name));
  }
}
