import type { KubernetesListObject } from './kubernetes-client.js';
import { listPages, type ListPage } from './paging.js';
import { connectionCollection, type StoreCaches } from './store-caches.js';
import type { ConnectionStore } from './connection-store.js';
import { CONNECTIONS, LABELS, type ConnectionIdentity, type ConnectionResource } from './resources.js';

/** Which connections {@link ConnectionScans.scanConnections} goes through: all unless narrowed. */
export interface ConnectionSelection {
  /** Only these integrations' (any of them). */
  integrations?: string[];
  /** Only those carrying every one of these labels. */
  labels?: Record<string, string>;
}

/**
 * Many connections at a time, one at a time: from the informer caches, or (a bounded store, the
 * identities of a sharded one) from the API server a page at a time through the one paging helper
 * the informers' lists use too (./paging.ts), never holding more than a page.
 */
export class ConnectionScans {
  constructor(
    private readonly caches: StoreCaches,
    private readonly connections: ConnectionStore,
  ) {}

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
    if (!this.caches.bounded) {
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
    const page: ListPage<ConnectionResource> = (limit, next) =>
      this.caches.json.get<KubernetesListObject<ConnectionResource>>(connectionCollection(namespace), {
        query: { limit: String(limit), ...(selector ? { labelSelector: selector } : {}), ...(next ? { continue: next } : {}) },
      });
    for await (const list of listPages(page, this.caches.scanPageSize)) {
      for (const c of list.items ?? []) {
        // A status the owner wrote says the Secret was there; one never written is checked.
        if (c.status?.updatedAt) yield c;
        else {
          const complete = await this.connections.findConnectionByName(namespace, c.metadata.name);
          if (complete) yield complete.resource;
        }
      }
    }
  }

  /** Complete connections of a namespace (those whose credentials Secret exists); not in a bounded store ({@link scanConnections}). */
  listConnections(namespace: string): ConnectionResource[] {
    const { connections, credentialSecrets } = this.caches.watched;
    const out: ConnectionResource[] = [];
    for (const c of connections.list(namespace)) {
      const secret = credentialSecrets.get(c.metadata.name, namespace);
      if (!secret) continue;
      if (!this.caches.deriveStatus || c.status?.updatedAt) out.push(c);
      else out.push(this.connections.withCredentials(c)?.resource ?? c);
    }
    return out;
  }

  /**
   * The identity of every Connection of every watched namespace, complete or not (for the controller),
   * each handed to `visit` as it arrives: a store that caches every Connection walks its cache, a
   * sharded one reads them from the API server as metadata, a page at a time, and keeps none.
   */
  async scanConnectionIdentities(visit: (c: ConnectionIdentity) => void): Promise<void> {
    const { connectionIndex, namespaces, scanPageSize } = this.caches;
    if (connectionIndex) {
      for (const c of connectionIndex.list()) visit(c);
      return;
    }
    const { custom } = this.caches.metadataView();
    for (const namespace of namespaces.length ? namespaces : [undefined]) {
      const page = this.caches.customPage<ConnectionIdentity>(CONNECTIONS, namespace, undefined, custom);
      for await (const list of listPages(page, scanPageSize)) {
        for (const c of list.items ?? []) {
          toIdentity(c);
          visit(c);
        }
      }
    }
  }
}

/** A valid label value: anything else could not be on a connection, and must not reach a label selector. */
const isLabelValue = (v: string) => v.length <= 63 && /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/.test(v) && v !== '';

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
