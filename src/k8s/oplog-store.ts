import { CoreV1Api, CustomObjectsApi, type KubeConfig, type V1ConfigMap, type V1OwnerReference } from './kubernetes-client.js';
import type { Clock } from '../domain/clock.js';
import { ENVIRONMENT_PREFIX, UNVERIFIED_PREFIX, prefixOfId, type OplogEntry } from '../oplog/entry.js';
import type { OperationLog, OplogSink, OplogTarget } from '../oplog/operation-log.js';
import { page, type OplogPage, type OplogQuery } from '../oplog/query.js';
import { retain, type RetentionPolicy } from '../oplog/retention.js';
import { conflictRetriesExhausted, isConflict, readOrUndefined, statusOf } from './errors.js';
import { connectionObjectName } from './names.js';
import { API_VERSION, CONNECTIONS, ENVIRONMENTS, GROUP, LABELS, VERSION, type EnvironmentResource } from './resources.js';

/** Label on every operation log ConfigMap: `connection`, `environment` or `unverified`. */
export const OPLOG_LABEL = 'latchkey.dev/oplog';
const DATA_KEY = 'entries.jsonl';

export interface OplogRetention {
  connection: RetentionPolicy;
  environment: RetentionPolicy;
  /** The ring of requests nobody authenticated (src/oplog/entry.ts, UNVERIFIED_PREFIX). */
  unverified: RetentionPolicy;
}

/** The rings, each owned by the Environment: their prefix is also their label value. */
const RINGS: readonly string[] = [ENVIRONMENT_PREFIX, UNVERIFIED_PREFIX];

/** The ConfigMap holding the entries of one prefix (a connection's object name, or the environment ring). */
export function oplogObjectName(prefix: string): string {
  return `latchkey-oplog-${prefix}`;
}

/**
 * The operation log in Kubernetes: per connection a ConfigMap owned by the Connection (so the
 * garbage collector deletes it with the connection) with its newest entries, per namespace a ring
 * ConfigMap owned by the Environment for attempts without a connection, and another for requests
 * nobody authenticated (so those cannot evict the first ring's entries). Entries are JSON lines,
 * oldest first, trimmed by the retention policy on every write. Reads go to the API server: the log
 * is read by people, rarely, and keeping it out of the informer caches keeps every replica's memory
 * independent of how many entries there are.
 */
export class OplogStore implements OplogSink {
  private readonly core: CoreV1Api;
  private readonly custom: CustomObjectsApi;

  constructor(
    kc: KubeConfig,
    private readonly retention: OplogRetention,
    private readonly clock: Clock,
  ) {
    this.core = kc.makeApiClient(CoreV1Api);
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  async append(namespace: string, target: OplogTarget, entries: OplogEntry[]): Promise<void> {
    if (target.kind === 'connection') {
      const uid = target.uid ?? (await this.connectionUid(namespace, target.name));
      // The connection is gone (or never was): the entries still need a home, and get() looks there too.
      if (!uid) return this.write(namespace, ENVIRONMENT_PREFIX, entries, await this.environmentOwner(namespace));
      const owner: V1OwnerReference = { apiVersion: API_VERSION, kind: CONNECTIONS.kind, name: target.name, uid, controller: true };
      const integration = entries.find((e) => e.integration)?.integration;
      return this.write(namespace, target.name, entries, owner, integration, target.created);
    }
    const ring = target.kind === 'unverified' ? UNVERIFIED_PREFIX : ENVIRONMENT_PREFIX;
    return this.write(namespace, ring, entries, await this.environmentOwner(namespace));
  }

  /** One entry by ID, or undefined. */
  async get(namespace: string, id: string): Promise<OplogEntry | undefined> {
    const prefix = prefixOfId(id);
    if (!prefix) return undefined;
    const own = (await this.read(namespace, prefix))?.entries.find((e) => e.id === id);
    if (own || RINGS.includes(prefix)) return own;
    return (await this.read(namespace, ENVIRONMENT_PREFIX))?.entries.find((e) => e.id === id);
  }

  /**
   * A page of entries matching the query, newest first. A query for one connection reads its object
   * and the environment's ring; an integration narrows the listing by label (and adds both rings);
   * otherwise every log object of the namespace is read, in pages.
   */
  async search(namespace: string, q: OplogQuery): Promise<OplogPage> {
    let entries: OplogEntry[];
    if (q.integration !== undefined && q.connectionId !== undefined) {
      const objects = await Promise.all([
        this.read(namespace, connectionObjectName(q.integration, q.connectionId)),
        this.read(namespace, ENVIRONMENT_PREFIX),
      ]);
      entries = objects.flatMap((o) => o?.entries ?? []);
    } else {
      const selector =
        q.integration !== undefined
          ? `${OPLOG_LABEL}=connection,${LABELS.integration}=${q.integration}`
          : `${OPLOG_LABEL} in (connection,${RINGS.join(',')})`;
      entries = await this.listEntries(namespace, selector);
      if (q.integration !== undefined)
        for (const ring of await Promise.all(RINGS.map((r) => this.read(namespace, r)))) entries.push(...(ring?.entries ?? []));
    }
    return page(entries, q);
  }

  /** Every log object of a namespace (for the benchmark and tests): name and stored bytes. */
  async objects(namespace: string): Promise<Array<{ name: string; bytes: number; entries: number }>> {
    const out: Array<{ name: string; bytes: number; entries: number }> = [];
    let cont: string | undefined;
    do {
      const list = await this.core.listNamespacedConfigMap({ namespace, labelSelector: OPLOG_LABEL, limit: 500, _continue: cont });
      for (const cm of list.items) {
        const text = cm.data?.[DATA_KEY] ?? '';
        out.push({ name: cm.metadata!.name!, bytes: Buffer.byteLength(text), entries: parseOplogEntries(text).length });
      }
      cont = list.metadata?._continue || undefined;
    } while (cont);
    return out;
  }

  private async listEntries(namespace: string, labelSelector: string): Promise<OplogEntry[]> {
    const out: OplogEntry[] = [];
    let cont: string | undefined;
    do {
      const list = await this.core.listNamespacedConfigMap({ namespace, labelSelector, limit: 500, _continue: cont });
      for (const cm of list.items) out.push(...parseOplogEntries(cm.data?.[DATA_KEY]));
      cont = list.metadata?._continue || undefined;
    } while (cont);
    return out;
  }

  private async read(namespace: string, prefix: string): Promise<{ cm: V1ConfigMap; entries: OplogEntry[] } | undefined> {
    return readOrUndefined(async () => {
      const cm = await this.core.readNamespacedConfigMap({ namespace, name: oplogObjectName(prefix) });
      return { cm, entries: parseOplogEntries(cm.data?.[DATA_KEY]) };
    });
  }

  /**
   * Appends with compare-and-swap (create when missing), trimming to the retention policy. `absent`:
   * the object cannot exist yet (a connection's first entries), so the first attempt creates it without
   * reading first; if it exists after all (409), the next attempts read and replace as usual.
   */
  private async write(
    namespace: string,
    prefix: string,
    entries: OplogEntry[],
    owner: V1OwnerReference | undefined,
    integration?: string,
    absent = false,
  ): Promise<void> {
    const policy =
      prefix === ENVIRONMENT_PREFIX
        ? this.retention.environment
        : prefix === UNVERIFIED_PREFIX
          ? this.retention.unverified
          : this.retention.connection;
    const ring = RINGS.includes(prefix);
    const name = oplogObjectName(prefix);
    let lastAnswer: unknown;
    for (let attempt = 1; attempt <= 10; attempt++) {
      try {
        const current = absent && attempt === 1 ? undefined : await this.read(namespace, prefix);
        const kept = retain([...(current?.entries ?? []), ...entries], this.clock.now(), policy);
        const data = { [DATA_KEY]: kept.map((e) => JSON.stringify(e)).join('\n') };
        if (current) {
          await this.core.replaceNamespacedConfigMap({ namespace, name, body: { ...current.cm, data } });
        } else {
          const labels: Record<string, string> = {
            [LABELS.managedBy]: LABELS.managedByValue,
            [OPLOG_LABEL]: ring ? prefix : 'connection',
            ...(ring ? {} : { [LABELS.connection]: prefix }),
            ...(integration ? { [LABELS.integration]: integration } : {}),
          };
          await this.core.createNamespacedConfigMap({
            namespace,
            body: { metadata: { name, namespace, labels, ...(owner ? { ownerReferences: [owner] } : {}) }, data },
          });
        }
        return;
      } catch (err) {
        // 409: someone wrote (or created) it meanwhile; read again and redo the append. An API server
        // shedding load (429, 5xx) or a dropped connection is worth a few patient retries too.
        const status = statusOf(err);
        if (!isConflict(err) && status !== 429 && status !== undefined && status < 500) throw err;
        lastAnswer = err;
        await new Promise((r) => setTimeout(r, isConflict(err) ? Math.random() * 20 * attempt : 200 * attempt));
      }
    }
    throw conflictRetriesExhausted(`operation log ${namespace}/${name}`, lastAnswer);
  }

  private async connectionUid(namespace: string, name: string): Promise<string | undefined> {
    return readOrUndefined(async () => {
      const c = (await this.custom.getNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: CONNECTIONS.plural,
        name,
      })) as {
        metadata?: { uid?: string };
      };
      return c.metadata?.uid;
    });
  }

  /** The namespace's oldest Environment (the one that counts) owns the ring. */
  private async environmentOwner(namespace: string): Promise<V1OwnerReference | undefined> {
    const list = (await this.custom.listNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: ENVIRONMENTS.plural,
    })) as {
      items: EnvironmentResource[];
    };
    const env = [...list.items].sort((a, b) =>
      String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')),
    )[0];
    return env?.metadata.uid
      ? { apiVersion: API_VERSION, kind: ENVIRONMENTS.kind, name: env.metadata.name, uid: env.metadata.uid, controller: true }
      : undefined;
  }
}

/** The entries of a log object's text (JSON lines, oldest first). */
export function parseOplogEntries(text: string | undefined): OplogEntry[] {
  if (!text) return [];
  const out: OplogEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      out.push(JSON.parse(line) as OplogEntry);
    } catch {
      // A line someone edited by hand is skipped rather than hiding the whole log.
    }
  }
  return out;
}

/** The store behind a context's operation log, for reads (REST API, dashboard). */
export function oplogReader(ctx: { oplog?: OperationLog }): OplogStore | undefined {
  return ctx.oplog?.sink instanceof OplogStore ? ctx.oplog.sink : undefined;
}
