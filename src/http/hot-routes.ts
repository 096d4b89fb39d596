import type { RequestHandler } from 'express';

/**
 * The two busiest endpoints, dispatched by the first handler of the app instead of after a walk of
 * every route and router of the stack: `GET /connections/:connectionId` (the fetch) and every
 * request under `/proxy`. They run the very handlers the router would find (the secret key's check,
 * the route's zod checks, the same errors through the same error handler). Every `/proxy` request is
 * answered here; a fetch this declines (HEAD, a path express must decode itself) reaches the REST router. Measured in
 * docs/benchmarks.md (hot paths).
 */
export interface HotRoutes {
  /** `requireSecretKey`: puts the Environment on `res.locals` or fails with a 401. */
  auth: RequestHandler;
  /** The fetch route's handler (`routeHandler` of `getConnection`), reading `req.params.connectionId`. */
  fetch: RequestHandler;
  /** The proxy's handler (any method; reads the raw path from `req.originalUrl`). */
  proxy: RequestHandler;
}

/** The route patterns the request metric labels these with (as the router would). */
export const FETCH_ROUTE = '/connections/:connectionId';
export const PROXY_ROUTE = '/proxy';

/** `/proxy`, `/proxy/...` or `/proxy?...`, case ignored (as express's `use('/proxy')` matches). */
const PROXY_PATH = /^\/proxy(?:[/?]|$)/i;
/** One segment after `/connections`, an optional trailing slash, then the query (as express's non-strict route matches). */
const FETCH_PATH = /^\/connections\/([^/?]+)\/?(?:\?|$)/i;

export function hotRoutes(routes: HotRoutes): RequestHandler {
  return (req, res, next) => {
    const url = req.url;
    if (PROXY_PATH.test(url)) {
      res.locals.route = PROXY_ROUTE;
      routes.auth(req, res, (err?: unknown) => (err ? next(err) : void routes.proxy(req, res, next)));
      return;
    }
    if (req.method !== 'GET') return next();
    const match = FETCH_PATH.exec(url);
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
