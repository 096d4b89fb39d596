import type { KubernetesObject } from '@kubernetes/client-node';
import type { ResilientInformer } from './informer.js';

type Listener<T> = (obj: T) => void;

interface OverlayEntry<T> {
  obj: T | undefined; // undefined: deleted by us
  resourceVersion: number;
  expiresAt: number;
}

const OVERLAY_TTL_MS = 60_000;

/**
 * Informer-backed reads for one kind, across one informer per watched namespace (or one for all).
 *
 * Writes made by this process are put in a short-lived overlay so that a read right after a write
 * sees it even before the watch event arrives (read-your-writes). The overlay entry wins only while
 * its resourceVersion is newer than the informer's (Kubernetes resource versions are comparable
 * integers since 1.34), so a later change by anyone else still shows.
 */
export class ResourceCache<T extends KubernetesObject> {
  private readonly overlay = new Map<string, OverlayEntry<T>>();

  constructor(private readonly informers: ResilientInformer<T>[]) {}

  async start(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.start()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.stop()));
  }

  get hasSynced(): boolean {
    return this.informers.every((i) => i.hasSynced);
  }

  get restarts(): number {
    return this.informers.reduce((n, i) => n + i.restarts, 0);
  }

  on(verb: 'add' | 'update' | 'delete', cb: Listener<T>): void {
    for (const i of this.informers) i.on(verb, cb);
  }

  /** Any add, update or delete. */
  onChange(cb: Listener<T>): void {
    for (const verb of ['add', 'update', 'delete'] as const) this.on(verb, cb);
  }

  get(name: string, namespace?: string): T | undefined {
    const fromInformer = this.fromInformers(name, namespace);
    const entry = this.overlay.get(key(name, namespace));
    if (!entry) return fromInformer;
    if (entry.expiresAt < Date.now() || (fromInformer && rv(fromInformer) >= entry.resourceVersion)) {
      this.overlay.delete(key(name, namespace));
      return fromInformer;
    }
    return entry.obj;
  }

  list(namespace?: string): T[] {
    const out = new Map<string, T>();
    for (const informer of this.informers) {
      for (const obj of informer.list(namespace)) {
        out.set(key(obj.metadata!.name!, obj.metadata!.namespace), obj);
      }
    }
    for (const [k, entry] of this.overlay) {
      const [ns] = splitKey(k);
      if (namespace !== undefined && ns !== namespace) continue;
      const current = out.get(k);
      if (entry.expiresAt < Date.now() || (current && rv(current) >= entry.resourceVersion)) continue;
      if (entry.obj) out.set(k, entry.obj);
      else out.delete(k);
    }
    return [...out.values()];
  }

  /** Records an object this process just wrote (the API server's answer). */
  remember(obj: T): void {
    const name = obj.metadata!.name!;
    this.overlay.set(key(name, obj.metadata!.namespace), {
      obj,
      resourceVersion: rv(obj),
      expiresAt: Date.now() + OVERLAY_TTL_MS,
    });
  }

  /** Records that this process deleted an object. */
  forget(name: string, namespace: string | undefined, lastResourceVersion: string | undefined): void {
    const current = this.fromInformers(name, namespace);
    const version = Math.max(Number(lastResourceVersion ?? 0), current ? rv(current) : 0) + 1;
    this.overlay.set(key(name, namespace), { obj: undefined, resourceVersion: version, expiresAt: Date.now() + OVERLAY_TTL_MS });
  }

  private fromInformers(name: string, namespace?: string): T | undefined {
    for (const informer of this.informers) {
      const found = informer.get(name, namespace);
      if (found) return found;
    }
    return undefined;
  }
}

function key(name: string, namespace: string | undefined): string {
  return `${namespace ?? ''}/${name}`;
}

function splitKey(k: string): [string, string] {
  const i = k.indexOf('/');
  return [k.slice(0, i), k.slice(i + 1)];
}

function rv(obj: KubernetesObject): number {
  const n = Number(obj.metadata?.resourceVersion ?? 0);
  return Number.isFinite(n) ? n : 0;
}
