import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { ResolvedEnvironment } from '../auth/environment-keys.js';
import type { ProxyRequestHandler } from './rest/routes/proxy.js';

/**
 * The two busiest endpoints, taken out of the walk of every route and router of the stack:
 *
 * - every request under `/proxy` is answered by the server's request listener before express sees
 *   it (`withDirectProxy`): express's own work per request (its request and response prototypes,
 *   the router's walk) was, measured, a large share of the proxy's CPU; the proxy works on node's
 *   messages anyway;
 * - `GET /connections/:connectionId` (the fetch) is dispatched by the app's first handler
 *   (`hotFetch`), running the very handlers the router would find (the secret key's check, the
 *   route's zod checks, the same errors through the same error handler); a fetch it declines (HEAD,
 *   a path express must decode itself) reaches the REST router.
 *
 * Measured in docs/benchmarks.md (hot paths).
 */

/** The route patterns the request metric labels these with (as the router would). */
export const FETCH_ROUTE = '/connections/:connectionId';
export const PROXY_ROUTE = '/proxy';

/** `/proxy`, `/proxy/...` or `/proxy?...`, case ignored (as express's `use('/proxy')` matched). */
const PROXY_PATH = /^\/proxy(?:[/?]|$)/i;
/** One segment after `/connections`, an optional trailing slash, then the query (as express's non-strict route matches). */
const FETCH_PATH = /^\/connections\/([^/?]+)\/?(?:\?|$)/i;

export type Listener = (req: IncomingMessage, res: ServerResponse) => void;

export interface DirectProxy {
  /** Times the request into the HTTP request metric under `route`. */
  observe(req: IncomingMessage, res: ServerResponse, route: string): void;
  /** The secret key's check: the Environment, or throws the 401 to answer. */
  authenticate(authorization: string | undefined): ResolvedEnvironment;
  proxy: ProxyRequestHandler;
  /** Answers an error as the error handler of the app does. */
  answerError(req: IncomingMessage, res: ServerResponse, err: unknown): void;
}

/** The server's request listener: `/proxy` answered by `direct`, everything else by `app`. */
export function withDirectProxy(app: Listener, direct: DirectProxy): Listener {
  return (req, res) => {
    if (!PROXY_PATH.test(req.url ?? '')) return app(req, res);
    direct.observe(req, res, PROXY_ROUTE);
    let environment: ResolvedEnvironment;
    try {
      environment = direct.authenticate(req.headers.authorization);
    } catch (err) {
      direct.answerError(req, res, err);
      return;
    }
    direct.proxy(req, res, environment).catch((err: unknown) => direct.answerError(req, res, err));
  };
}

export interface HotFetch {
  /** `requireSecretKey`: puts the Environment on `res.locals` or fails with a 401. */
  auth: RequestHandler;
  /** The fetch route's handler (`routeHandler` of `getConnection`), reading `req.params.connectionId`. */
  fetch: RequestHandler;
}

export function hotFetch(routes: HotFetch): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'GET') return next();
    const match = FETCH_PATH.exec(req.url);
    if (!match) return next();
    let connectionId: string;
    try {
      connectionId = decodeURIComponent(match[1]!);
    } catch {
      // A malformed escape: the router answers it as it answers any other path.
      return next();
    }
    req.params = { connectionId };
    res.locals.route = FETCH_ROUTE;
    routes.auth(req, res, (err?: unknown) => (err ? next(err) : void routes.fetch(req, res, next)));
  };
}
