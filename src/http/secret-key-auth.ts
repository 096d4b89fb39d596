import type { RequestHandler, Response } from 'express';
import type { EnvironmentKeys, ResolvedEnvironment } from '../auth/environment-keys.js';
import { LatchkeyError } from '../domain/errors.js';

/**
 * Requires `Authorization: Bearer <secret key>` and puts the Environment it selects on
 * `res.locals.environment`; every handler after it works in that Environment's namespace only.
 */
export function requireSecretKey(keys: EnvironmentKeys): RequestHandler {
  return (req, res, next) => {
    const header = req.headers.authorization;
    if (!header) {
      next(
        new LatchkeyError(
          'unauthenticated',
          'missing_authorization',
          'Authorization header is required: "Authorization: Bearer <secret key>"',
        ),
      );
      return;
    }
    const match = /^Bearer ([\x21-\x7e]{1,512})$/i.exec(header.trim());
    if (!match) {
      next(new LatchkeyError('unauthenticated', 'malformed_authorization', 'Authorization header must be "Bearer <secret key>"'));
      return;
    }
    const environment = keys.resolve(match[1]!);
    if (!environment) {
      next(new LatchkeyError('unauthenticated', 'unknown_secret_key', 'The secret key does not belong to any environment'));
      return;
    }
    res.locals.environment = environment;
    next();
  };
}

export function environmentOf(res: Response): ResolvedEnvironment {
  const env = res.locals.environment as ResolvedEnvironment | undefined;
  if (!env) throw new Error('requireSecretKey must run before this handler');
  return env;
}
