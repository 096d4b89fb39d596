/**
 * The one rule for "is this HTTP answer worth another attempt" and the one Retry-After parser, used
 * by the proxy, webhook delivery and token refreshes alike (webhook receivers get a wider rule of
 * their own, below).
 */

/** A Retry-After beyond this is read as this: a peer asking for days must not park work for days. */
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * Retryable: 408 (the peer timed out waiting for our request, so the same request can succeed: it
 * was not processed), 429 (rate limited) and 5xx, except 501 (Not Implemented: the peer does not
 * support the request at all, so the same request keeps failing).
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status <= 599 && status !== 501);
}

/**
 * A webhook receiver's answer is worth another attempt unless it is 410 Gone. Unlike a provider's API,
 * the receiver is the application's own endpoint, and a 404, 401 or 400 from it is almost always a
 * deploy or a misconfiguration being fixed: giving up would lose the event for good, while retrying
 * within the delivery's window costs a few requests.
 */
export function isRetryableWebhookStatus(status: number): boolean {
  return status !== 410;
}

/**
 * Milliseconds a Retry-After header asks for: delta-seconds or an HTTP date (a date in the past is
 * 0), at most `maxMs`. Undefined when absent or not one of the two forms.
 */
export function parseRetryAfter(
  value: string | readonly string[] | null | undefined,
  nowMs: number,
  maxMs: number = MAX_RETRY_AFTER_MS,
): number | undefined {
  const v = (typeof value === 'string' ? value : value?.[0])?.trim();
  if (!v) return undefined;
  let ms: number;
  if (/^\d+$/.test(v)) ms = Number(v) * 1000;
  else {
    // An HTTP date names a weekday and a month; Date.parse alone would also accept "1" or "2025".
    const at = /^[A-Za-z]{3},? /.test(v) ? Date.parse(v) : NaN;
    if (!Number.isFinite(at)) return undefined;
    ms = Math.max(0, at - nowMs);
  }
  return Math.min(ms, maxMs);
}
