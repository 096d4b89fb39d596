import { TokenBuckets } from '../../src/domain/token-bucket.js';

describe('TokenBuckets', () => {
  it('lets a burst of `capacity` through, then refills at the rate', () => {
    let now = 0;
    const buckets = new TokenBuckets(60, 3, () => now); // one a second
    expect([buckets.take('a'), buckets.take('a'), buckets.take('a')]).toEqual([0, 0, 0]);
    expect(buckets.take('a')).toBe(1000);
    expect(buckets.take('b')).toBe(0); // keys are independent
    now += 1000;
    expect(buckets.take('a')).toBe(0);
    expect(buckets.take('a')).toBe(1000);
  });

  it('is off at rate 0 and keeps at most maxKeys keys', () => {
    let now = 0;
    expect(new TokenBuckets(0, 0, () => now).take('x')).toBe(0);
    const buckets = new TokenBuckets(60, 1, () => now, 10);
    for (let i = 0; i < 100; i++) buckets.take(`k${i}`);
    expect(buckets.size).toBeLessThanOrEqual(10);
    now += 60_000; // idle buckets are full again: dropped
    buckets.take('fresh');
    expect(buckets.size).toBe(1);
  });

  it('peeks without taking, and takes back a token given back', () => {
    let now = 0;
    const buckets = new TokenBuckets(60, 2, () => now);
    expect(buckets.peek('a')).toBe(0); // an unknown key has a full bucket
    expect([buckets.take('a'), buckets.take('a')]).toEqual([0, 0]);
    expect(buckets.peek('a')).toBe(1000);
    expect(buckets.peek('a')).toBe(1000); // peeking took nothing
    buckets.giveBack('a');
    expect(buckets.peek('a')).toBe(0);
    expect(buckets.take('a')).toBe(0);
    expect(buckets.take('a')).toBe(1000);
    now += 500;
    expect(buckets.peek('a')).toBe(500);
  });
});
