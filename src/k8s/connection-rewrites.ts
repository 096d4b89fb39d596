import { compareAndSwap } from './cas.js';
import { readOrUndefined } from './errors.js';
import { apiPath, KubeJsonApi } from './json-api.js';
import type { KubeConfig, KubernetesListObject } from './kubernetes-client.js';
import { CONNECTIONS, GROUP, VERSION, type ConnectionResource } from './resources.js';

const PAGE_SIZE = 250;

/**
 * Reads every Connection of the cluster page by page and rewrites one's spec by compare-and-swap:
 * what a stored-format migration (`latchkey migrate`) needs, and nothing a server or controller uses.
 */
export class ConnectionRewrites {
  private readonly json: KubeJsonApi;

  constructor(kc: KubeConfig, json?: KubeJsonApi) {
    this.json = json ?? new KubeJsonApi(kc);
  }

  /** Every Connection, a page at a time (none held beyond its page). */
  async *all(namespace?: string): AsyncGenerator<ConnectionResource> {
    const base = namespace
      ? apiPath(`/apis/${GROUP}/${VERSION}/namespaces`, namespace, CONNECTIONS.plural)
      : `/apis/${GROUP}/${VERSION}/${CONNECTIONS.plural}`;
    let next: string | undefined;
    do {
      const page = await this.json.get<KubernetesListObject<ConnectionResource> & { metadata?: { continue?: string } }>(base, {
        query: { limit: String(PAGE_SIZE), ...(next ? { continue: next } : {}) },
      });
      yield* page.items ?? [];
      next = page.metadata?.continue || undefined;
    } while (next);
  }

  /**
   * Writes `change(current)` as the Connection's new spec, read again and redone on a conflict (a
   * concurrent write wins and is seen). Undefined from `change`, or a deleted Connection: nothing written.
   */
  async rewriteSpec(
    c: ConnectionResource,
    change: (current: ConnectionResource) => ConnectionResource['spec'] | undefined,
  ): Promise<ConnectionResource | undefined> {
    const path = apiPath(`/apis/${GROUP}/${VERSION}/namespaces`, c.metadata.namespace!, CONNECTIONS.plural, c.metadata.name!);
    return readOrUndefined(async () => {
      let written = false;
      const out = await compareAndSwap<ConnectionResource>({
        what: `connection ${c.metadata.namespace}/${c.metadata.name}`,
        readCached: () => c,
        readFresh: () => this.json.get<ConnectionResource>(path),
        mutate: (current) => {
          const spec = change(current);
          return spec ? { ...current, spec } : undefined;
        },
        write: async (next) => {
          const stored = await this.json.put<ConnectionResource>(path, next);
          written = true;
          return stored;
        },
      });
      return written ? out : undefined;
    });
  }

  async close(): Promise<void> {
    await this.json.close();
  }
}
