/** `POST`/`DELETE`/`GET /dashboard/api/session`: sign in with the environment's secret key, sign out, who is signed in. */
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { LatchkeyError } from '../../../../../domain/errors.js';
import { parse } from '../../../../errors.js';
import { throttled, type FailedAuthThrottle } from '../../../../failed-auth-throttle.js';
import { sessionEnvironment, signIn, signOut, type SessionDeps } from '../../../session.js';

const SignInBody = z.strictObject({ secret_key: z.string().min(1).max(512) });

export function signInRoute(session: SessionDeps, authThrottle: FailedAuthThrottle): RequestHandler {
  return (req, res, next) => {
    try {
      const env = throttled(authThrottle, 'dashboard', req, () => signIn(session, res, parse(SignInBody, req.body, 'body').secret_key));
      res.status(201).json({ namespace: env.namespace, environment: env.name });
    } catch (err) {
      next(err);
    }
  };
}

export function signOutRoute(session: SessionDeps): RequestHandler {
  return (_req, res) => {
    signOut(session, res);
    res.status(204).end();
  };
}

export function sessionRoute(session: SessionDeps): RequestHandler {
  return (req, res, next) => {
    const env = sessionEnvironment(session, req);
    if (!env) return next(new LatchkeyError('unauthenticated', 'not_signed_in', "Sign in with the environment's secret key"));
    res.json({ namespace: env.namespace, environment: env.name, mode: env.resource.spec.mode ?? 'production' });
  };
}
