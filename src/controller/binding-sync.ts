/**
 * When CredentialBindings are synced, and by which replica: the replica that owns a binding's
 * connection (the same rendezvous hash as its refreshes, src/controller/rendezvous-hash.ts) syncs the
 * binding, when the binding changes, when the connection or its credentials Secret changes (a refresh:
 * the Secret follows within the reconcile's time), when the connection's Environment changes, after
 * a membership change, and when the reconciler asks (the token due within the binding's margin, a
 * periodic look at the namespace's labels). The work itself is the reconciler's
 * (./reconcilers/credential-binding.ts).
 */
import type { CredentialBindingResource } from '../k8s/resources.js';
import { connectionObjectName } from '../k8s/names.js';
import type { Logger } from '../platform/log.js';
import type { CredentialBindingReconciler } from './reconcilers/credential-binding.js';
import type { ControllerMetrics } from './metrics.js';
import { WorkQueue } from './workqueue.js';

export interface BindingSyncOptions {
  /** The binding cache (src/k8s/credential-bindings.ts). */
  bindings: { get(namespace: string, name: string): CredentialBindingResource | undefined; list(): CredentialBindingResource[] };
  reconciler: Pick<CredentialBindingReconciler, 'reconcile'>;
  /** Whether this replica syncs the bindings of the connection `namespace/name` now. */
  owns(connectionKey: string): boolean;
  logger: Logger;
  metrics: ControllerMetrics;
  concurrency?: number;
}

/** The connection key (`namespace/object name`, as sharding hashes it) a binding names. */
export function bindingConnectionKey(b: CredentialBindingResource): string {
  const ref = b.spec.connectionRef;
  return `${ref.namespace}/${connectionObjectName(ref.integration, ref.connectionId)}`;
}

const bindingKey = (b: CredentialBindingResource) => `${b.metadata.namespace}/${b.metadata.name}`;

export class BindingSync {
  readonly queue: WorkQueue;
  /** connection key -> binding keys; rebuilt from the cache after any binding changed. */
  private index: Map<string, Set<string>> | undefined;
  /** The generation last seen of each binding. */
  private readonly generations = new Map<string, number>();

  constructor(private readonly opts: BindingSyncOptions) {
    this.queue = new WorkQueue({
      name: 'credential-bindings',
      concurrency: opts.concurrency ?? 4,
      logger: opts.logger.child({ component: 'credential-bindings' }),
      onDepth: (depth) => opts.metrics.workqueueDepth.set({ queue: 'credential-bindings' }, depth),
      onTerminal: () => opts.metrics.workqueueTerminal.inc({ queue: 'credential-bindings' }),
      handler: async (key) => {
        const i = key.indexOf('/');
        const b = opts.bindings.get(key.slice(0, i), key.slice(i + 1));
        // Gone, or its connection is another replica's now.
        if (!b || !opts.owns(bindingConnectionKey(b))) return;
        const outcome = await opts.reconciler.reconcile(b.metadata.namespace!, b.metadata.name);
        if (outcome.requeueAfterMs !== undefined) this.queue.addAfter(key, outcome.requeueAfterMs);
      },
    });
  }

  /**
   * A binding was added, changed or deleted. A change of its status alone (the reconciler's own write)
   * is not work: only a new binding or a new generation is synced.
   */
  bindingChanged(b: CredentialBindingResource, change: 'add' | 'update' | 'delete'): void {
    const key = bindingKey(b);
    const generation = b.metadata.generation ?? 0;
    if (change === 'update' && this.generations.get(key) === generation) return;
    this.index = undefined;
    if (change === 'delete') {
      this.generations.delete(key);
      this.queue.remove(key);
      return;
    }
    this.generations.set(key, generation);
    if (this.opts.owns(bindingConnectionKey(b))) this.queue.add(key);
  }

  /** A connection (or its credentials Secret) changed or went: its bindings are synced. */
  connectionChanged(connectionKey: string): void {
    const keys = this.indexed().get(connectionKey);
    if (!keys || !this.opts.owns(connectionKey)) return;
    for (const k of keys) this.queue.add(k);
  }

  /** An Environment of `namespace` changed (who may bind): the bindings of its connections are judged again. */
  environmentChanged(namespace: string): void {
    for (const b of this.opts.bindings.list())
      if (b.spec.connectionRef.namespace === namespace && this.opts.owns(bindingConnectionKey(b))) this.queue.add(bindingKey(b));
  }

  /** Every binding this replica owns now (start, membership change); the others are dropped. */
  enqueueOwned(): void {
    for (const b of this.opts.bindings.list()) {
      if (this.opts.owns(bindingConnectionKey(b))) this.queue.add(bindingKey(b));
      else this.queue.remove(bindingKey(b));
    }
  }

  stop(): Promise<void> {
    return this.queue.stop();
  }

  private indexed(): Map<string, Set<string>> {
    if (this.index) return this.index;
    const index = new Map<string, Set<string>>();
    for (const b of this.opts.bindings.list()) {
      const k = bindingConnectionKey(b);
      let set = index.get(k);
      if (!set) index.set(k, (set = new Set()));
      set.add(bindingKey(b));
    }
    return (this.index = index);
  }
}
