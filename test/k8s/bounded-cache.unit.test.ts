/**
 * The bounded cache's rules, with a hand-written change feed (the real one is a watch on an API
 * server: test/k8s/bounded-store.test.ts runs the store on it). Here each event, reset and read can
 * be put exactly where a race would put it.
 */
import { BoundedCache } from '../../src/k8s/bounded-cache.js';
import type { Change, ChangeFeed } from '../../src/k8s/change-feed.js';

interface Obj {
  metadata: { name: string; namespace: string; resourceVersion: string };
  value: string;
}

/** Stands in for ChangeFeed: the same surface, driven by the test. */
class FakeFeed {
  isFresh = true;
  restarts = 0;
  private changes: Array<(c: Change) => void> = [];
  private resets: Array<() => void> = [];
  onChange(cb: (c: Change) => void) {
    this.changes.push(cb);
  }
  onReset(cb: () => void) {
    this.resets.push(cb);
  }
  async start() {}
  async stop() {}
  change(name: string, resourceVersion: string, deleted = false) {
    for (const cb of this.changes) cb({ name, namespace: 'ns', resourceVersion, deleted });
  }
  reset() {
    for (const cb of this.resets) cb();
  }
}

/** The "API server": current objects, and reads the test can hold back. */
function bed(maxEntries = 2) {
  const stored = new Map<string, Obj>();
  const reads: string[] = [];
  let hold: { release: () => void } | undefined;
  const feed = new FakeFeed();
  const cache = new BoundedCache<Obj>({
    maxEntries,
    feeds: [feed as unknown as ChangeFeed],
    read: async (_ns, name) => {
      reads.push(name);
      const snapshot = stored.get(name);
      if (hold) await new Promise<void>((r) => (hold = { release: r }));
      return snapshot && structuredClone(snapshot);
    },
  });
  const put = (name: string, resourceVersion: string, value: string) =>
    stored.set(name, { metadata: { name, namespace: 'ns', resourceVersion }, value });
  return {
    cache,
    feed,
    reads,
    put,
    holdReads: () => (hold = { release: () => undefined }),
    release: () => {
      const h = hold;
      hold = undefined;
      h?.release();
    },
  };
}

it('reads a miss from the API server once, then answers from memory', async () => {
  const b = bed();
  b.put('a', '1', 'one');
  expect(b.cache.get('a', 'ns')).toBeUndefined();
  const [x, y] = await Promise.all([b.cache.load('a', 'ns'), b.cache.load('a', 'ns')]);
  expect(x?.value).toBe('one');
  expect(y).toBe(x);
  expect((await b.cache.load('a', 'ns'))?.value).toBe('one');
  expect(b.reads).toEqual(['a']);
});

it('keeps at most maxEntries, the least recently read going first', async () => {
  const b = bed(2);
  for (const n of ['a', 'b', 'c']) b.put(n, '1', n);
  await b.cache.load('a', 'ns');
  await b.cache.load('b', 'ns');
  b.cache.get('a', 'ns'); // a read again: b is now the oldest
  await b.cache.load('c', 'ns');
  expect(b.cache.size).toBe(2);
  expect(b.cache.get('b', 'ns')).toBeUndefined();
  expect(b.cache.get('a', 'ns')?.value).toBe('a');
  expect((await b.cache.load('b', 'ns'))?.value).toBe('b');
});

it('drops an object the feed reports newer or deleted, and keeps one whose own write came back', async () => {
  const b = bed();
  b.put('a', '5', 'old');
  await b.cache.load('a', 'ns');
  b.feed.change('a', '5'); // the same version (our own write echoed): still good
  expect(b.cache.get('a', 'ns')?.value).toBe('old');
  b.put('a', '6', 'new');
  b.feed.change('a', '6');
  expect(b.cache.get('a', 'ns')).toBeUndefined();
  expect((await b.cache.load('a', 'ns'))?.value).toBe('new');
  b.feed.change('a', '7', true);
  expect(b.cache.get('a', 'ns')).toBeUndefined();
});

it('a version that is not a number is never trusted to be older', async () => {
  const b = bed();
  b.put('a', '5', 'old');
  await b.cache.load('a', 'ns');
  b.feed.change('a', 'not-a-number');
  expect(b.cache.get('a', 'ns')).toBeUndefined();
});

it('answers but does not keep a read that a change overtook', async () => {
  const b = bed();
  b.put('a', '5', 'old');
  b.holdReads();
  const reading = b.cache.load('a', 'ns');
  await new Promise((r) => setImmediate(r));
  // Another replica writes version 6 while the read of version 5 is on its way back.
  b.put('a', '6', 'new');
  b.feed.change('a', '6');
  b.release();
  expect((await reading)?.value).toBe('old');
  expect(b.cache.get('a', 'ns')).toBeUndefined();
  expect((await b.cache.load('a', 'ns'))?.value).toBe('new');
});

it('empties on a reset, does not keep a read started before it, and serves nothing from memory while the feed is down', async () => {
  const b = bed();
  b.put('a', '1', 'one');
  b.put('b', '1', 'two');
  await b.cache.load('a', 'ns');
  b.holdReads();
  const reading = b.cache.load('b', 'ns');
  await new Promise((r) => setImmediate(r));
  b.feed.reset();
  b.release();
  await reading;
  expect(b.cache.size).toBe(0);

  await b.cache.load('a', 'ns');
  b.feed.isFresh = false;
  expect(b.cache.get('a', 'ns')).toBeUndefined();
  const before = b.reads.length;
  expect((await b.cache.load('a', 'ns'))?.value).toBe('one');
  expect(b.reads.length).toBe(before + 1);
  // Nothing read while the feed is down is kept.
  b.feed.isFresh = true;
  expect(b.cache.size).toBe(1); // 'a' from before the outage is still in the map...
  b.feed.reset(); // ...and a feed that comes back after losing history resets
  expect(b.cache.size).toBe(0);
});

it('remembers its own writes unless older than what it keeps, and wakes whoever waits for the object', async () => {
  const b = bed();
  b.put('a', '3', 'three');
  await b.cache.load('a', 'ns');
  const waiting = b.cache.whenChanged('a', 'ns', new AbortController().signal);
  b.cache.remember({ metadata: { name: 'a', namespace: 'ns', resourceVersion: '4' }, value: 'four' });
  await waiting;
  expect(b.cache.get('a', 'ns')?.value).toBe('four');
  b.cache.remember({ metadata: { name: 'a', namespace: 'ns', resourceVersion: '2' }, value: 'two' });
  expect(b.cache.get('a', 'ns')?.value).toBe('four');
  b.cache.forget('a', 'ns');
  expect(b.cache.get('a', 'ns')).toBeUndefined();
  expect(b.cache.waiting).toBe(0);
});
