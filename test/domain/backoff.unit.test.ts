/** The one backoff rule and its equal-jitter form, as webhook delivery and the proxy use them. */
import { backoffDelay, equalJitterDelay } from '../../src/domain/backoff.js';
import { retryDelayMs } from '../../src/proxy/retry-policy.js';

describe('backoff', () => {
  it('doubles from the base, stops at the cap, and takes the jitter off the full delay', () => {
    const policy = { baseMs: 100, maxMs: 1000 };
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffDelay(policy, n))).toEqual([100, 100, 200, 400, 800, 1000]);
    expect(backoffDelay({ ...policy, jitter: 0.2 }, 4, () => 0)).toBe(800);
    expect(backoffDelay({ ...policy, jitter: 0.2 }, 4, () => 0.5)).toBe(720);
    expect(backoffDelay(policy, 10_000)).toBe(1000);
  });

  it('equal jitter waits between half and all of the delay, counted from the bottom', () => {
    const policy = { baseMs: 100, maxMs: 1000 };
    expect(equalJitterDelay(policy, 3, () => 0)).toBe(200);
    expect(equalJitterDelay(policy, 3, () => 0.5)).toBe(300);
    expect(equalJitterDelay(policy, 3, () => 1)).toBe(400);
    expect(equalJitterDelay(policy, 9, () => 1)).toBe(1000);
  });

  it("is the proxy's retry delay, unless a Retry-After within its ceiling says otherwise", () => {
    const policy = { retries: 3, baseDelayMs: 100, maxDelayMs: 10_000, maxRetryAfterMs: 60_000 };
    expect(retryDelayMs(policy, 2, undefined, () => 0.25)).toBe(equalJitterDelay({ baseMs: 100, maxMs: 10_000 }, 2, () => 0.25));
    expect(retryDelayMs(policy, 2, undefined, () => 0.25)).toBe(125);
    expect(retryDelayMs(policy, 2, 5000)).toBe(5000);
    expect(retryDelayMs(policy, 2, 120_000)).toBeUndefined();
  });
});
