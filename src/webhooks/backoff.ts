/** Retry schedule of webhook deliveries (see docs/connect-ui.md, "Auth webhooks"). */
export interface BackoffConfig {
  webhookBackoffBaseSeconds: number;
  webhookBackoffMaxSeconds: number;
}

/**
 * Delay before attempt `failedAttempts + 1`, in seconds: exponential (base * 2^(n-1), capped at the
 * maximum) with "equal jitter" (a random point in the upper half), so a crowd of deliveries failing
 * together does not retry in lockstep. A Retry-After from the receiver is a lower bound (still capped).
 */
export function retryDelaySeconds(
  failedAttempts: number,
  cfg: BackoffConfig,
  random: () => number = Math.random,
  retryAfterSeconds?: number,
): number {
  const exp = Math.min(cfg.webhookBackoffMaxSeconds, cfg.webhookBackoffBaseSeconds * 2 ** Math.max(0, failedAttempts - 1));
  const jittered = exp / 2 + random() * (exp / 2);
  const delay = retryAfterSeconds !== undefined ? Math.max(retryAfterSeconds, jittered) : jittered;
  return Math.min(cfg.webhookBackoffMaxSeconds, delay);
}
