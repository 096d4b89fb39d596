import type { RequestHandler } from 'express';
import type { Config } from '../platform/config.js';
import { sessionTokenNamespace } from '../auth/session-tokens.js';
import { openSession } from '../connect/session.js';
import type { AppContext } from '../context/app-context.js';
import { LatchkeyError } from '../domain/errors.js';
import { TokenBuckets } from '../domain/token-bucket.js';

/**
 * Request rates an untrusted client may use, per replica (token buckets in memory): the Connect
 * API per session and per namespace, and session creation per namespace. Over the limit: 429 with
 * Retry-After and the error body. A session's budget (default 60 a minute) is a small share of its
 * namespace's (1200): one session alone can never empty the namespace's bucket.
 */
export class RateLimits {
  readonly connectPerSession: TokenBuckets;
  readonly connectPerNamespace: TokenBuckets;
  readonly sessionsPerNamespace: TokenBuckets;

  constructor(
    config: Pick<Config, 'connectApiRatePerSession' | 'connectApiRatePerNamespace' | 'sessionCreateRatePerNamespace'>,
    now: () => number,
  ) {
    this.connectPerSession = new TokenBuckets(config.connectApiRatePerSession, config.connectApiRatePerSession, now);
    this.connectPerNamespace = new TokenBuckets(config.connectApiRatePerNamespace, config.connectApiRatePerNamespace, now);
    this.sessionsPerNamespace = new TokenBuckets(config.sessionCreateRatePerNamespace, config.sessionCreateRatePerNamespace, now);
  }

  /** Throws the 429 when `namespace` may not create another session now. */
  checkSessionCreation(namespace: string): void {
    const wait = this.sessionsPerNamespace.take(namespace);
    if (wait > 0) throw tooMany(wait, 'Too many connect sessions created for this environment; try again later.');
  }
}

function tooMany(retryAfterMs: number, message: string): LatchkeyError {
  return new LatchkeyError('rate_limited', 'rate_limited', message, { retryAfterMs });
}

/**
 * Middleware for /connect/api/*: the session's bucket (by its `sid`), then the namespace's. A token
 * that does not open is not limited here: the route answers 401 without doing any work.
 */
export function connectApiRateLimit(ctx: Pick<AppContext, 'catalog' | 'clock'>, limits: RateLimits): RequestHandler {
  return (req, _res, next) => {
    const token = /^Bearer ([\x21-\x7e]{1,8192})$/i.exec(req.headers.authorization?.trim() ?? '')?.[1];
    const namespace = token ? sessionTokenNamespace(token) : undefined;
    if (!token || !namespace) return next();
    let sid: string;
    try {
      sid = openSession(ctx.catalog, token, ctx.clock.now()).claims.sid;
    } catch {
      return next();
    }
    // The session's own bucket first: a session over its budget is refused without touching the
    // environment's, so one end user cannot use up what the environment's other end users share.
    const sessionKey = `${namespace}/${sid}`;
    const sessionWait = limits.connectPerSession.take(sessionKey);
    if (sessionWait > 0) return next(tooMany(sessionWait, 'Too many requests from this connect session; try again later.'));
    const nsWait = limits.connectPerNamespace.take(namespace);
    if (nsWait > 0) {
      limits.connectPerSession.giveBack(sessionKey); // refused: the session did not use its token
      return next(tooMany(nsWait, 'Too many requests for this environment; try again later.'));
    }
    next();
  };
}
