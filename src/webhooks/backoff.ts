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

/** Retry-After as seconds (delta-seconds or an HTTP date), or undefined. */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  return Number.isFinite(at) ? Math.max(0, (at - nowMs) / 1000) : undefined;
}

/**
 * Whether a webhook receiver's answer is worth another attempt: everything but 410 Gone. Unlike a
 * provider's API, the receiver is the application's own endpoint, and a 404, 401 or 400 from it is
 * almost always a deploy or a misconfiguration being fixed; giving up would lose the event for good.
 */
export function isRetryableWebhookStatus(status: number): boolean {
  return status !== 410;
}
