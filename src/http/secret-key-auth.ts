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
 * The Environment a request's secret key selects; a 401 {@link LatchkeyError}, or a 429 when its
 * source address failed the check too often (then the key is not looked at). With `tokens`, a bearer
 * that is a JWT and no secret key is a Kubernetes token: its Environment comes with the caller that
 * reviews it (src/http/service-account-requests.ts).
 */
export function authenticateRequest(
  keys: EnvironmentKeys,
  throttle: FailedAuthThrottle,
  req: IncomingMessage,
  tokens?: ServiceAccountRequests,
): ResolvedEnvironment {
  return throttled(throttle, 'rest', req, () => authenticate(keys, req.headers.authorization, tokens && ((t) => tokens.resolve(t, req))));
}

/** A Kubernetes token: longer than a secret key may be (a projected token is about a kilobyte). */
const TOKEN_BEARER = /^Bearer ([\w.-]{513,16384})$/i;

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
  const match = /^Bearer ([\x21-\x7e]{1,512})$/i.exec(header.trim());
  if (!match) {
    const token = viaToken && TOKEN_BEARER.exec(header.trim())?.[1];
    if (token && isJwtShaped(token)) return viaToken(token);
    throw new LatchkeyError('unauthenticated', 'malformed_authorization', 'Authorization header must be "Bearer <secret key>"');
  }
  const environment = keys.resolve(match[1]!);
  if (environment) return environment;
  if (viaToken && isJwtShaped(match[1]!)) return viaToken(match[1]!);
  throw new LatchkeyError('unauthenticated', 'unknown_secret_key', 'The secret key does not belong to any environment');
}

export function environmentOf(res: Response): ResolvedEnvironment {
  const env = res.locals.environment as ResolvedEnvironment | undefined;
  if (!env) throw new Error('requireSecretKey must run before this handler');
  return env;
}
