import type { Express, Router } from 'express';
import { refresherFor } from '../../../connections/shared-refresher.js';
import type { AppContext } from '../../../context/app-context.js';
import { buildOpenApi } from '../../openapi.js';
import { connectSessionRoutes } from './connect-sessions.js';
import { connectionRoutes } from './connections.js';
import { integrationRoutes } from './integrations.js';
import { mountRoutes, type RouteSpec } from './define.js';
import type { RestDeps } from './deps.js';
import { RateLimits } from '../../rate-limits.js';
import { LastFetchedRecorder } from '../../../connections/last-fetched.js';
import { logRoutes } from './logs.js';
import { metadataRoutes } from './metadata.js';
import { providerRoutes } from './providers.js';

const API_VERSION = '1.0.0';

/** Every REST route, in mounting order (fixed paths before parameterized ones). */
export function restRoutes(deps: RestDeps): RouteSpec[] {
  return [
    ...providerRoutes(deps),
    ...integrationRoutes(deps),
    ...metadataRoutes(deps),
    ...connectionRoutes(deps),
    ...connectSessionRoutes(deps),
    ...logRoutes(deps),
  ];
}

/** The REST routes' dependencies: the context plus the process's shared token refresher. */
export function restDeps(ctx: AppContext, lastFetched?: LastFetchedRecorder): RestDeps {
  const refresher = refresherFor(ctx);
  return {
    ...ctx,
    refresher,
    refreshLock: refresher.lock,
    limits: new RateLimits(ctx.config, () => ctx.clock.now()),
    lastFetched: lastFetched ?? new LastFetchedRecorder({ ...ctx, intervalMs: ctx.config.lastFetchedIntervalSeconds * 1000 }),
  };
}

/**
 * Registers the REST API on the secret-key router and the OpenAPI document (public, on the app)
 * at `GET /openapi.json`. The document is generated from the same route specs.
 */
export function registerRestApi(app: Express, api: Router, routes: RouteSpec[], ctx: AppContext): void {
  mountRoutes(api, routes);
  const document = buildOpenApi(routes, { version: API_VERSION, serverUrl: ctx.config.publicBaseUrl });
  app.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
}
