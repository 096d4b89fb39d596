/**
 * The dashboard's sign-in: the environment's secret key, posted once, is exchanged for a session
 * cookie sealed under a key derived from that secret key (nothing stored; rotating the key signs
 * everyone out). The cookie is HttpOnly and SameSite=Strict; every API call must also carry the
 * `x-latchkey-dashboard` header and, when the browser sends one, a same-origin `Origin`, so another
 * site can neither read nor forge a request (CSRF) — the header alone forces a CORS preflight that
 * is never answered.
 */
import { randomBytes } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { EnvironmentKeys, ResolvedEnvironment } from '../../auth/environment-keys.js';
import { sealedKind, type SealedClaims } from '../../auth/sealed-values.js';
import type { Clock } from '../../domain/clock.js';
import { LatchkeyError } from '../../domain/errors.js';

export const COOKIE = 'latchkey_dashboard';
export const CSRF_HEADER = 'x-latchkey-dashboard';
const PREFIX = 'lkd_1';
const PURPOSE = 'dashboard-session';
/** A working day; signing in again is cheap. */
export const SESSION_SECONDS = 8 * 3600;

interface DashboardClaims extends SealedClaims {
  sid: string;
}

const sealed = sealedKind<DashboardClaims>(PURPOSE, PREFIX);

export interface SessionDeps {
  keys: EnvironmentKeys;
  clock: Clock;
  /** The namespace's secret key (sessions are sealed under it). */
  secretKeyOf(namespace: string): string | undefined;
  secureCookie: boolean;
  cookiePath: string;
}

function cookieOf(req: Request): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === COOKIE) return v.join('=');
  }
  return undefined;
}

function cookieHeader(deps: SessionDeps, value: string, maxAge: number): string {
  return [
    `${COOKIE}=${value}`,
    `Path=${deps.cookiePath}`,
    `Max-Age=${maxAge}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(deps.secureCookie ? ['Secure'] : []),
  ].join('; ');
}

/** Rejects requests that did not come from the dashboard's own page. */
export function sameOriginOnly(): RequestHandler {
  return (req, _res, next) => {
    if (req.headers[CSRF_HEADER] !== '1') {
      next(new LatchkeyError('forbidden', 'csrf_rejected', `Dashboard API calls must carry the ${CSRF_HEADER} header`));
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== 'null') {
      let host: string | undefined;
      try {
        host = new URL(origin).host;
      } catch {
        host = undefined;
      }
      if (host !== req.headers.host) {
        next(new LatchkeyError('forbidden', 'csrf_rejected', 'Cross-origin request refused'));
        return;
      }
    } else if (origin === 'null') {
      next(new LatchkeyError('forbidden', 'csrf_rejected', 'Cross-origin request refused'));
      return;
    }
    next();
  };
}

/** Exchanges a secret key for the cookie; the key itself is never stored or echoed. */
export function signIn(deps: SessionDeps, res: Response, secretKey: string): ResolvedEnvironment {
  const env = deps.keys.resolve(secretKey);
  if (!env) throw new LatchkeyError('unauthenticated', 'unknown_secret_key', 'This secret key does not belong to any environment');
  const exp = Math.floor(deps.clock.now() / 1000) + SESSION_SECONDS;
  const value = sealed.seal({ namespace: env.namespace, exp, sid: randomBytes(8).toString('hex') }, secretKey);
  res.setHeader('set-cookie', cookieHeader(deps, value, SESSION_SECONDS));
  return env;
}

export function signOut(deps: SessionDeps, res: Response): void {
  res.setHeader('set-cookie', cookieHeader(deps, '', 0));
}

/** The Environment of the request's session, or undefined. */
export function sessionEnvironment(deps: SessionDeps, req: Request): ResolvedEnvironment | undefined {
  const value = cookieOf(req);
  if (!value || value.length > 4096) return undefined;
  const namespace = sealed.namespaceOf(value);
  const key = namespace ? deps.secretKeyOf(namespace) : undefined;
  if (!namespace || !key) return undefined;
  if (!sealed.open(value, key, deps.clock.now()).ok) return undefined;
  const resource = deps.keys.primaryEnvironment(namespace);
  return resource ? { namespace, name: resource.metadata.name, resource } : undefined;
}

/** Puts the session's Environment where the REST route handlers look for it (`res.locals.environment`). */
export function requireSession(deps: SessionDeps): RequestHandler {
  return (req, res, next) => {
    const env = sessionEnvironment(deps, req);
    if (!env) {
      next(new LatchkeyError('unauthenticated', 'not_signed_in', "Sign in with the environment's secret key"));
      return;
    }
    res.locals.environment = env;
    next();
  };
}
