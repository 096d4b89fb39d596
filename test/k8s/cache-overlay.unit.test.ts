/**
 * The read-your-writes overlay of ResourceCache stays bounded. The informer here is a hand-written
 * stand-in (a map plus listeners): what is tested is the overlay's bookkeeping, not the watch, which
 * test/k8s/informer.test.ts covers against the real API server.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { ResourceCache } from '../../src/k8s/cache.js';
import type { ResilientInformer } from '../../src/k8s/informer.js';

type Verb = 'add' | 'update' | 'delete';

class StandInInformer {
  readonly objects = new Map<string, KubernetesObject>();
  private readonly listeners: Record<Verb, Array<(o: KubernetesObject) => void>> = { add: [], update: [], delete: [] };
  hasSynced = true;
  restarts = 0;
  on(verb: Verb, cb: (o: KubernetesObject) => void): void {
    this.listeners[verb].push(cb);
  }
  get(name: string, namespace?: string): KubernetesObject | undefined {
    return this.objects.get(`${namespace ?? ''}/${name}`);
  }
  list(namespace?: string): KubernetesObject[] {
    return [...this.objects.values()].filter((o) => namespace === undefined || o.metadata!.namespace === namespace);
  }
  /** What a watch event does: the store changes, then the listeners hear of it. */
  event(verb: Verb, o: KubernetesObject): void {
    const k = `${o.metadata!.namespace ?? ''}/${o.metadata!.name}`;
    if (verb === 'delete') this.objects.delete(k);
    else this.objects.set(k, o);
    for (const cb of this.listeners[verb]) cb(o);
  }
}

const obj = (name: string, resourceVersion: number): KubernetesObject => ({
  metadata: { name, namespace: 'ns', resourceVersion: String(resourceVersion) },
});

function cacheWith(now: () => number = Date.now) {
  const informer = new StandInInformer();
  const cache = new ResourceCache([informer as unknown as ResilientInformer<KubernetesObject>], now);
  return { informer, cache };
}

it('drops a written object from the overlay once the watch delivers that version', () => {
  const { informer, cache } = cacheWith();
  cache.remember(obj('a', 5));
  expect(cache.overlaySize).toBe(1);
  expect(cache.get('a', 'ns')?.metadata?.resourceVersion).toBe('5');
  informer.event('add', obj('a', 5));
  expect(cache.overlaySize).toBe(0);
  expect(cache.get('a', 'ns')?.metadata?.resourceVersion).toBe('5');
});

it('keeps the overlay entry while the watch still shows an older version', () => {
  const { informer, cache } = cacheWith();
  informer.event('add', obj('a', 3));
  cache.remember(obj('a', 7));
  informer.event('update', obj('a', 5));
  expect(cache.overlaySize).toBe(1);
  expect(cache.get('a', 'ns')?.metadata?.resourceVersion).toBe('7');
});

it('ignores an older version remembered after a newer one (a read answered before a write of ours)', () => {
  const { cache } = cacheWith();
  cache.remember(obj('a', 9));
  cache.remember(obj('a', 6));
  expect(cache.get('a', 'ns')?.metadata?.resourceVersion).toBe('9');
  cache.remember(obj('a', 12));
  expect(cache.get('a', 'ns')?.metadata?.resourceVersion).toBe('12');
});

it('drops a deletion tombstone when the watch delivers the deletion, even if never read', () => {
  const { informer, cache } = cacheWith();
  informer.event('add', obj('a', 3));
  cache.forget('a', 'ns', '3');
  expect(cache.list('ns')).toEqual([]);
  informer.event('delete', obj('a', 4));
  expect(cache.overlaySize).toBe(0);
  expect(cache.list('ns')).toEqual([]);
});

it('a deletion of an older incarnation does not hide the re-created object', () => {
  const { informer, cache } = cacheWith();
  informer.event('add', obj('a', 3));
  cache.remember(obj('a', 10));
  informer.event('delete', obj('a', 4));
  expect(cache.get('a', 'ns')?.metadata?.resourceVersion).toBe('10');
});

it('sweeps expired entries that no watch event and no read ever touched', () => {
  let t = 1_000_000;
  const { cache } = cacheWith(() => t);
  for (let i = 0; i < 300; i++) cache.remember(obj(`old-${i}`, i + 1));
  t += 120_000; // past the overlay's lifetime
  for (let i = 0; i < 300; i++) cache.remember(obj(`new-${i}`, 1000 + i));
  expect(cache.overlaySize).toBeLessThanOrEqual(300);
  expect(cache.list('ns').every((o) => o.metadata!.name!.startsWith('new-'))).toBe(true);
});
