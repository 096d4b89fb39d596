import type { Express, Router } from 'express';
import { RefreshLock } from '../../auth/refresh-lock.js';
import { TokenRefresher } from '../../auth/refresh.js';
import type { AppContext } from '../../context.js';
import { ConnectionEvents } from '../../k8s/events.js';
import { Leases } from '../../k8s/leases.js';
import { buildOpenApi } from '../openapi.js';
import { connectSessionRoutes } from './connect-sessions.js';
import { connectionRoutes } from './connections.js';
import { mountRoutes, type RouteSpec } from './define.js';
import type { RestDeps } from './deps.js';
import { metadataRoutes } from './metadata.js';
import { providerRoutes } from './providers.js';

/** Seconds a refresh lock is held at most (a crashed holder blocks the others this long). */
const REFRESH_LOCK_TTL_SECONDS = 30;
const API_VERSION = '1.0.0';

/** Every REST route, in mounting order (fixed paths before parameterized ones). */
export function restRoutes(deps: RestDeps): RouteSpec[] {
  return [...providerRoutes(deps), ...metadataRoutes(deps), ...connectionRoutes(deps), ...connectSessionRoutes(deps)];
}

/** Builds the token refresher and its lock from the application context. */
export function restDeps(ctx: AppContext): RestDeps {
  const leases = new Leases(ctx.kc, () => ctx.clock.now());
  const refreshLock = new RefreshLock(leases, ctx.config.identity, REFRESH_LOCK_TTL_SECONDS);
  const refresher = new TokenRefresher({
    store: ctx.store, lock: refreshLock, events: new ConnectionEvents(ctx.kc, 'server', () => ctx.clock.now()),
    config: ctx.config, logger: ctx.logger, clock: ctx.clock, fetch: ctx.fetch, metrics: ctx.metrics,
  });
  return { ...ctx, refresher, refreshLock };
}

/**
 * Registers the REST API on the secret-key router and the OpenAPI document (public, on the app)
 * at `GET /openapi.json`. Returns the route specs (the document is generated from them).
 */
export function registerRestApi(app: Express, api: Router, ctx: AppContext): RouteSpec[] {
  const routes = restRoutes(restDeps(ctx));
  mountRoutes(api, routes);
  const document = buildOpenApi(routes, { version: API_VERSION, serverUrl: ctx.config.publicBaseUrl });
  app.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  return routes;
}
