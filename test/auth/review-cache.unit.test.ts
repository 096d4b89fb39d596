/**
 * The review caches' map (src/auth/review-cache.ts): bounded (least recently used out), each answer
 * until its own deadline on an injected clock, one lookup for concurrent misses of one key, and a
 * failed lookup kept nowhere.
 */
import { ReviewCache } from '../../src/auth/review-cache.js';

let now = 0;
const clock = () => now;

beforeEach(() => {
  now = 1_000_000;
});

it('keeps an answer until its deadline, and none with a time that is not positive', () => {
  const cache = new ReviewCache<string>(10, clock);
  cache.set('a', 'A', 1000);
  cache.set('b', 'B', 0);
  now += 999;
  expect(cache.get('a')).toBe('A');
  expect(cache.get('b')).toBeUndefined();
  now += 1;
  expect(cache.get('a')).toBeUndefined();
  expect(cache.size).toBe(0);
});

it('holds at most its bound, the least recently used out first', () => {
  const cache = new ReviewCache<number>(2, clock);
  cache.set('a', 1, 60_000);
  cache.set('b', 2, 60_000);
  expect(cache.get('a')).toBe(1); // a is now the most recently used
  cache.set('c', 3, 60_000);
  expect(cache.size).toBe(2);
  expect(cache.get('b')).toBeUndefined();
  expect(cache.get('a')).toBe(1);
  expect(cache.get('c')).toBe(3);
});

it('makes one lookup for concurrent misses, says which call made it, and keeps no failure', async () => {
  const cache = new ReviewCache<string>(10, clock);
  let lookups = 0;
  let release!: (v: string) => void;
  const lookup = () => {
    lookups++;
    return new Promise<string>((r) => (release = r));
  };
  const first = cache.getOrLookup('k', lookup, () => 5000);
  const second = cache.getOrLookup('k', lookup, () => 5000);
  release('answer');
  expect(await first).toEqual({ value: 'answer', fresh: true });
  expect(await second).toEqual({ value: 'answer', fresh: false });
  expect(lookups).toBe(1);
  expect(await cache.getOrLookup('k', lookup, () => 5000)).toEqual({ value: 'answer', fresh: false });

  await expect(
    cache.getOrLookup(
      'x',
      () => Promise.reject(new Error('api down')),
      () => 5000,
    ),
  ).rejects.toThrow('api down');
  expect(
    await cache.getOrLookup(
      'x',
      async () => 'later',
      () => 5000,
    ),
  ).toEqual({ value: 'later', fresh: true });
});
