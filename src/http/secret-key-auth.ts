import type { IncomingMessage } from 'node:http';
import type { RequestHandler, Response } from 'express';
import type { EnvironmentKeys, ResolvedEnvironment } from '../auth/environment-keys.js';
import { LatchkeyError } from '../domain/errors.js';
import { throttled, type FailedAuthThrottle } from './failed-auth-throttle.js';

/**
 * Requires `Authorization: Bearer <secret key>` and puts the Environment it selects on
 * `res.locals.environment`; every handler after it works in that Environment's namespace only.
 */
export function requireSecretKey(keys: EnvironmentKeys, throttle: FailedAuthThrottle): RequestHandler {
  return (req, res, next) => {
    try {
      res.locals.environment = authenticateRequest(keys, throttle, req);
    } catch (err) {
      next(err);
      return;
    }
    next();
  };
}

/**
 * The Environment a request's secret key selects; a 401 {@link LatchkeyError}, or, for a wrong key
 * from a source address that failed the check too often, a 429. A right key is always served.
 */
export function authenticateRequest(keys: EnvironmentKeys, throttle: FailedAuthThrottle, req: IncomingMessage): ResolvedEnvironment {
  return throttled(throttle, 'rest', req, () => authenticate(keys, req.headers.authorization));
}

/** The Environment an `Authorization: Bearer <secret key>` header selects, or a 401 {@link LatchkeyError}. */
export function authenticate(keys: EnvironmentKeys, header: string | undefined): ResolvedEnvironment {
  if (!header)
    throw new LatchkeyError(
      'unauthenticated',
      'missing_authorization',
      'Authorization header is required: "Authorization: Bearer <secret key>"',
    );
  const match = /^Bearer ([\x21-\x7e]{1,512})$/i.exec(header.trim());
  if (!match) throw new LatchkeyError('unauthenticated', 'malformed_authorization', 'Authorization header must be "Bearer <secret key>"');
  const environment = keys.resolve(match[1]!);
  if (!environment) throw new LatchkeyError('unauthenticated', 'unknown_secret_key', 'The secret key does not belong to any environment');
  return environment;
}

export function environmentOf(res: Response): ResolvedEnvironment {
  const env = res.locals.environment as ResolvedEnvironment | undefined;
  if (!env) throw new Error('requireSecretKey must run before this handler');
  return env;
}
