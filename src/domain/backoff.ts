/**
 * The one backoff rule: the work queue, the refresh scheduler, compare-and-swap writes, webhook delivery and the proxy's
 * retries each pass their own parameters. Exponential (base × 2^(attempt−1)), capped, and spread by
 * jitter so that a crowd failing together does not retry in lockstep.
 */
export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
  /** 0..1: the delay is spread over [d × (1 − jitter), d]. 0 for none. */
  jitter?: number;
}

/**
 * Delay before attempt `attempt` (1-based; lower counts as 1), in whole milliseconds. `random()` (0..1,
 * injected by tests) is the share of the jitter taken off: 0 waits the full delay.
 */
export function backoffDelay(policy: BackoffPolicy, attempt: number, random: () => number = Math.random): number {
  const n = Math.max(1, Math.floor(attempt));
  const raw = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(n - 1, 52));
  const jitter = Math.min(Math.max(policy.jitter ?? 0, 0), 1);
  return Math.round(raw * (1 - jitter * random()));
}

/**
 * "Equal jitter": half the delay is certain, the other half random. `random()` here picks the point
 * from the bottom of that range up (0 waits half), as webhook delivery and the proxy count it.
 */
export function equalJitterDelay(policy: Omit<BackoffPolicy, 'jitter'>, attempt: number, random: () => number = Math.random): number {
  return backoffDelay({ ...policy, jitter: 0.5 }, attempt, () => 1 - random());
}
