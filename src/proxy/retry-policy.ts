/**
 * When and how long the proxy waits before retrying a provider request the caller asked to retry
 * (`Retries: N`): network errors and retryable statuses (src/domain/retry.ts), with the one backoff rule (src/domain/backoff.ts, equal jitter), or exactly
 * what the provider's `Retry-After` asks for (up to a ceiling; beyond it the response is returned).
 */
import { equalJitterDelay } from '../domain/backoff.js';
import { LatchkeyError } from '../domain/errors.js';

export const MAX_RETRIES = 10;

export interface RetryPolicy {
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the provider's answer goes back to the caller. */
  maxRetryAfterMs: number;
}

export const DEFAULT_BACKOFF = { baseDelayMs: 100, maxDelayMs: 10_000, maxRetryAfterMs: 60_000 } as const;

/** Parses the `Retries` request header (absent means 0); anything but a small integer is a 400. */
export function parseRetries(value: string | string[] | undefined): number {
  if (value === undefined) return 0;
  const v = Array.isArray(value) ? (value[0] ?? '') : value;
  if (!/^\s*\d{1,3}\s*$/.test(v))
    throw new LatchkeyError('invalid_input', 'invalid_retries', `The Retries header must be an integer from 0 to ${MAX_RETRIES}`);
  const n = Number(v);
  if (n > MAX_RETRIES)
    throw new LatchkeyError('invalid_input', 'invalid_retries', `The Retries header must be an integer from 0 to ${MAX_RETRIES}`);
  return n;
}

/** Delay before retry number `attempt` (1-based); undefined means do not retry. */
export function retryDelayMs(
  policy: RetryPolicy,
  attempt: number,
  retryAfter: number | undefined,
  random = Math.random,
): number | undefined {
  if (retryAfter !== undefined) return retryAfter <= policy.maxRetryAfterMs ? retryAfter : undefined;
  return equalJitterDelay({ baseMs: policy.baseDelayMs, maxMs: policy.maxDelayMs }, attempt, random);
}
