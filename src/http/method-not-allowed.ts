/**
 * 405 for a path that exists with other methods, with `Allow` derived from the route table (so it
 * cannot drift from what is served). Mounted after the routes: it only sees requests none matched.
 */
import type { RequestHandler, Router } from 'express';
import { LatchkeyError } from '../domain/errors.js';

export interface RouteMethod {
  method: string;
  /** Express path with `:name` parameters, e.g. `/connections/:connectionId`. */
  path: string;
}

/** `:name` matches one segment; a trailing slash is tolerated and case ignored, as express does. */
function patternOf(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}/?$`, 'i');
}

export function methodNotAllowed(routes: RouteMethod[]): RequestHandler {
  const patterns = routes.map((r) => ({ method: r.method.toUpperCase(), pattern: patternOf(r.path) }));
  return (req, res, next) => {
    const allowed = new Set(patterns.filter((p) => p.pattern.test(req.path)).map((p) => p.method));
    if (allowed.size === 0) {
      next();
      return;
    }
    // Express answers HEAD with the GET route.
    if (allowed.has('GET')) allowed.add('HEAD');
    res.set('Allow', [...allowed].sort().join(', '));
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    next(
      new LatchkeyError(
        'method_not_allowed',
        'method_not_allowed',
        `${req.method} is not supported here; use ${[...allowed].sort().join(', ')}`,
      ),
    );
  };
}

/** The method and path of every route registered on a router (for routers not built from route specs). */
export function routeMethodsOf(router: Router): RouteMethod[] {
  return router.stack.flatMap((layer) =>
    layer.route ? layer.route.stack.filter((l) => l.method).map((l) => ({ method: l.method, path: layer.route!.path })) : [],
  );
}
