import type { IncomingMessage } from 'node:http';
import type { RequestHandler, Response } from 'express';
import type { EnvironmentKeys, ResolvedEnvironment } from '../auth/environment-keys.js';
import { LatchkeyError } from '../domain/errors.js';
import { throttled, type FailedAuthThrottle } from './failed-auth-throttle.js';
import { isJwtShaped } from '../auth/service-account-auth.js';
import type { ServiceAccountRequests } from './service-account-requests.js';

/**
 * Requires `Authorization: Bearer <secret key>` and puts the Environment it selects on
 * `res.locals.environment`; every handler after it works in that Environment's namespace only.
 */
export function requireSecretKey(keys: EnvironmentKeys, throttle: FailedAuthThrottle, tokens?: ServiceAccountRequests): RequestHandler {
  return (req, res, next) => {
    try {
      res.locals.environment = authenticateRequest(keys, throttle, req, tokens);
    } catch (err) {
      next(err);
      return;
    }
    next();
  };
}

/**
 * The Environment a request's secret key selects; a 401 {@link LatchkeyError}, or, for a wrong key
 * from a source address that failed the check too often, a 429. A right key is always served. With
 * `tokens`, a bearer that is a JWT and no secret key is a Kubernetes token: its Environment comes with
 * the caller that reviews it (src/http/service-account-requests.ts).
 */
export function authenticateRequest(
  keys: EnvironmentKeys,
  throttle: FailedAuthThrottle,
  req: IncomingMessage,
  tokens?: ServiceAccountRequests,
): ResolvedEnvironment {
  return throttled(throttle, 'rest', req, () => authenticate(keys, req.headers.authorization, tokens && ((t) => tokens.resolve(t, req))));
}

/**
 * A header longer than this cannot hold a secret key (512 characters at most, and some spaces): a
 * Kubernetes token (a projected one is about a kilobyte) is told apart by its length before the
 * key's pattern runs, which took microseconds to refuse a kilobyte.
 */
const LONGEST_KEY_HEADER = 600;

/**
 * The Environment an `Authorization: Bearer <secret key>` header selects, or a 401 {@link LatchkeyError}.
 * The secret key is looked up first and as before; only a bearer that is no key and has a JWT's shape
 * goes to `viaToken`.
 */
export function authenticate(
  keys: EnvironmentKeys,
  header: string | undefined,
  viaToken?: (token: string) => ResolvedEnvironment,
): ResolvedEnvironment {
  if (!header)
    throw new LatchkeyError(
      'unauthenticated',
      'missing_authorization',
      'Authorization header is required: "Authorization: Bearer <secret key>"',
    );
  if (viaToken && header.length > LONGEST_KEY_HEADER) {
    const token = bearerToken(header);
    if (token) return viaToken(token);
  }
  const match = /^Bearer ([\x21-\x7e]{1,512})$/i.exec(header.trim());
  if (!match) throw new LatchkeyError('unauthenticated', 'malformed_authorization', 'Authorization header must be "Bearer <secret key>"');
  const environment = keys.resolve(match[1]!);
  if (environment) return environment;
  if (viaToken && isJwtShaped(match[1]!)) return viaToken(match[1]!);
  throw new LatchkeyError('unauthenticated', 'unknown_secret_key', 'The secret key does not belong to any environment');
}

/** The JWT of a `Bearer <jwt>` header, or undefined. */
function bearerToken(header: string): string | undefined {
  const h = header.trim();
  if (h.length < 8 || h.charCodeAt(6) !== 32 || h.slice(0, 6).toLowerCase() !== 'bearer') return undefined;
  const token = h.slice(7);
  return isJwtShaped(token) ? token : undefined;
}

export function environmentOf(res: Response): ResolvedEnvironment {
  const env = res.locals.environment as ResolvedEnvironment | undefined;
  if (!env) throw new Error('requireSecretKey must run before this handler');
  return env;
}
