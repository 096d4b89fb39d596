/**
 * Throttles failed secret-key checks by source address (REST API, proxy and dashboard sign-in
 * together): the key is always checked first, and only a failed check from an address that failed
 * too often is answered 429 (with Retry-After) instead of 401. A right key is never refused: many
 * callers share one address in a cluster (a sidecar, a node's SNAT, a gateway), and one of them
 * sending wrong keys must not lock the others out. Guessing is not what stops a guess: a key holds
 * at least 128 bits (src/auth/secret-key-strength.ts).
 */
import { isIPv6 } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { Counter, metric, type Registry } from '../platform/metrics.js';
import { LatchkeyError } from '../domain/errors.js';
import { TokenBuckets } from '../domain/token-bucket.js';

export type AuthSurface = 'rest' | 'dashboard';

export interface FailedAuthLimits {
  /** Failures an address may make in a row before it is throttled. */
  burst: number;
  /** Failures a minute it regains afterwards. */
  perMinute: number;
  /** Addresses remembered at most (the least recently failed are forgotten first). */
  maxAddresses: number;
}

/** 20 wrong keys in a row, then one every 3 s: a person mistyping never sees it, guessing is slowed to a crawl. */
export const DEFAULT_FAILED_AUTH_LIMITS: FailedAuthLimits = { burst: 20, perMinute: 20, maxAddresses: 10_000 };

const authFailures = (registry: Registry) =>
  metric(
    registry,
    'latchkey_auth_failures_total',
    (registers) =>
      new Counter({
        name: 'latchkey_auth_failures_total',
        help: 'Secret-key checks that failed, answered 401 (rejected) or, from an address that failed too often, 429 (throttled), by surface (rest, dashboard).',
        labelNames: ['surface', 'result'] as const,
        registers,
      }),
  );

/**
 * The address a request is throttled by: the socket's peer. X-Forwarded-For is not read: the REST API
 * and the dashboard are not behind the Ingress (docs/security.md), so any such header comes from the
 * caller itself. IPv6 addresses count by their /64 (one host usually holds a whole /64).
 */
export function sourceAddress(req: IncomingMessage): string {
  const raw = req.socket.remoteAddress ?? 'unknown';
  const address = raw.startsWith('::ffff:') && raw.includes('.') ? raw.slice(7) : raw;
  if (!isIPv6(address)) return address;
  return `${expandIPv6(address).slice(0, 4).join(':')}::/64`;
}

function expandIPv6(address: string): string[] {
  const [head = '', tail = ''] = address.split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return groups.map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''));
}

/**
 * One per process, shared by both surfaces (alternating them gains nothing). A success does not
 * reset an address: a caller holding one Environment's key could otherwise interleave it to keep
 * an address's failures answered 401. Counts are per replica, in memory, at most `maxAddresses`.
 */
export class FailedAuthThrottle {
  private readonly failures: TokenBuckets;
  private readonly counter: ReturnType<typeof authFailures>;

  constructor(metrics: Registry, now: () => number, limits: FailedAuthLimits = DEFAULT_FAILED_AUTH_LIMITS) {
    this.failures = new TokenBuckets(limits.perMinute, limits.burst, now, limits.maxAddresses);
    this.counter = authFailures(metrics);
  }

  /**
   * Counts a failed key check against `address`; throws the 429 when the address is over its budget
   * (the caller then answers that instead of its 401).
   */
  failed(surface: AuthSurface, address: string): void {
    const wait = this.failures.take(address);
    if (wait <= 0) {
      this.counter.inc({ surface, result: 'rejected' });
      return;
    }
    this.counter.inc({ surface, result: 'throttled' });
    throw new LatchkeyError(
      'rate_limited',
      'too_many_failed_authentications',
      'Too many failed secret-key checks from this address; try again later.',
      { retryAfterMs: wait },
    );
  }

  get addresses(): number {
    return this.failures.size;
  }
}

/** Codes of a wrong or mangled key (a missing header is not a guess and is not counted). */
export const FAILED_KEY_CODES: ReadonlySet<string> = new Set(['unknown_secret_key', 'malformed_authorization', 'namespace_required']);

/**
 * Runs `check` (a secret-key check): its result when it passes, whatever the address did before;
 * when it fails, the failure counted against the address and the 429 thrown instead of the 401 once
 * the address is over its budget. The success path does no more than the check itself.
 */
export function throttled<T>(throttle: FailedAuthThrottle, surface: AuthSurface, req: IncomingMessage, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof LatchkeyError && FAILED_KEY_CODES.has(err.code)) throttle.failed(surface, sourceAddress(req));
    throw err;
  }
}
