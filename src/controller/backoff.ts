/** Exponential backoff: base × 2^(attempt−1), capped, with optional ±jitter (a fraction of the delay). */
export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
  /** 0..1: the delay is spread over [d × (1 − jitter), d]. 0 for none. */
  jitter?: number;
}

export function backoffDelay(policy: BackoffPolicy, attempt: number, random: () => number = Math.random): number {
  const n = Math.max(1, Math.floor(attempt));
  const raw = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(n - 1, 52));
  const jitter = Math.min(Math.max(policy.jitter ?? 0, 0), 1);
  return Math.round(raw * (1 - jitter * random()));
}

/** The longest delay setTimeout accepts (about 24.8 days); longer waits are done in steps. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
