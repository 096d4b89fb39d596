import { equalJitterDelay } from '../domain/backoff.js';

/** Retry schedule of webhook deliveries (see docs/connect-ui.md, "Auth webhooks"). */
export interface BackoffConfig {
  webhookBackoffBaseSeconds: number;
  webhookBackoffMaxSeconds: number;
}

/**
 * Delay before attempt `failedAttempts + 1`, in seconds: the one backoff rule (src/domain/backoff.ts)
 * with equal jitter and the configured base and maximum. A Retry-After from the receiver is a lower
 * bound (still capped).
 */
export function retryDelaySeconds(
  failedAttempts: number,
  cfg: BackoffConfig,
  random: () => number = Math.random,
  retryAfterSeconds?: number,
): number {
  const policy = { baseMs: cfg.webhookBackoffBaseSeconds * 1000, maxMs: cfg.webhookBackoffMaxSeconds * 1000 };
  const jittered = equalJitterDelay(policy, failedAttempts, random) / 1000;
  const delay = retryAfterSeconds !== undefined ? Math.max(retryAfterSeconds, jittered) : jittered;
  return Math.min(cfg.webhookBackoffMaxSeconds, delay);
}
