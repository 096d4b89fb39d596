import { PatchStrategy, setHeaderOptions } from './kubernetes-client.js';
import { hasCode } from '../domain/errors.js';
import { isConflict, isNotFound, OBJECT_NOT_FOUND } from './errors.js';
import { RESET_MANAGED_FIELDS } from './managed-fields.js';
import type { ConnectionStore } from './connection-store.js';
import type { StoreCaches } from './store-caches.js';
import { CONNECTIONS, GROUP, LABELS, VERSION, type ConnectionIdentity, type ConnectionResource } from './resources.js';

/** Request options of a JSON merge patch (the generated clients send JSON Patch otherwise). */
const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** The controller's upkeep of its share of connections: their shard labels, and half-made ones swept. */
export class ConnectionUpkeep {
  constructor(
    private readonly caches: StoreCaches,
    private readonly connections: ConnectionStore,
  ) {}

  /**
   * Deletes Connections whose credentials Secret never came to exist (their creator died between the
   * two writes). Only objects older than `olderThanMs` are touched, so creations in flight are left alone.
   */
  async sweepIncompleteConnections(olderThanMs: number, now = Date.now(), owns: (key: string) => boolean = () => true): Promise<string[]> {
    const removed: string[] = [];
    // A sharded store's share: every Connection it owns is labelled for it (Secret or not) and so cached whole.
    for (const c of this.caches.connectionIndex?.list() ?? this.caches.watched.connections.list()) {
      const key = `${c.metadata.namespace!}/${c.metadata.name}`;
      if (!owns(key)) continue;
      if (await this.connections.removeIncompleteConnection(c.metadata.namespace!, c.metadata.name, olderThanMs, now, c)) removed.push(key);
    }
    return removed;
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
    const { custom, core, fieldManager, connections, credentialSecrets } = this.caches;
    const identity = known ?? (await this.connections.findConnectionIdentity(namespace, name));
    const labelConnection = async (): Promise<boolean> => {
      if (identity?.metadata.labels?.[LABELS.shard] === shard) return true;
      const version = identity?.metadata.resourceVersion;
      const request = { group: GROUP, version: VERSION, namespace, plural: CONNECTIONS.plural, name, fieldManager };
      const body = { metadata: { labels: { [LABELS.shard]: shard }, resourceVersion: version, managedFields: RESET_MANAGED_FIELDS } };
      try {
        // Changed since the cached identity (a conflict), or none cached: read and update instead.
        const patched = version
          ? await custom.patchNamespacedCustomObject({ ...request, body }, MERGE_PATCH).catch((err: unknown) => {
              if (isConflict(err)) return undefined;
              throw err;
            })
          : undefined;
        if (patched) connections.remember(patched as ConnectionResource);
        else
          await this.connections.updateConnection(namespace, name, (c) =>
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
      if (credentialSecrets.get(name, namespace)?.metadata?.labels?.[LABELS.shard] === shard) return true;
      try {
        const body = { metadata: { labels: { [LABELS.shard]: shard }, managedFields: RESET_MANAGED_FIELDS } };
        credentialSecrets.remember(await core.patchNamespacedSecret({ namespace, name, body, fieldManager }, MERGE_PATCH));
        return true;
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
    };
    const [connection, secret] = await Promise.all([labelConnection(), labelSecret()]);
    return { secret: connection && secret };
  }
}
