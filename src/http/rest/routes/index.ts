/**
 * The REST router's wiring: every route, one file each (or a small group), in folders that mirror
 * the URL (`connections/connectionId/get-connection.ts` serves `GET /connections/:connectionId`).
 */
import type { Express, Router } from 'express';
import { refresherFor } from '../../../connections/shared-refresher.js';
import type { AppContext } from '../../../context/app-context.js';
import { IntegrationsService } from '../../../integrations/service.js';
import { buildOpenApi } from '../../openapi.js';
import { RateLimits } from '../../rate-limits.js';
import { LastFetchedRecorder } from '../../../connections/last-fetched.js';
import { mountRoutes, type RouteSpec } from './define.js';
import type { RestDeps } from './deps.js';
import { listProviders } from './providers/list-providers.js';
import { getProvider } from './providers/provider/get-provider.js';
import { listIntegrations } from './integrations/list-integrations.js';
import { createIntegration } from './integrations/create-integration.js';
import { getIntegration } from './integrations/uniqueKey/get-integration.js';
import { updateIntegration } from './integrations/uniqueKey/update-integration.js';
import { deleteIntegration } from './integrations/uniqueKey/delete-integration.js';
import { connectionsMetadata } from './connections/metadata/metadata.js';
import { connectionMetadata } from './connection/connectionId/metadata/metadata.js';
import { importConnection } from './connections/import-connection.js';
import { importConnectionDeprecated } from './connection/import-connection-deprecated.js';
import { listConnections } from './connections/list-connections.js';
import { getConnection } from './connections/connectionId/get-connection.js';
import { deleteConnection } from './connections/connectionId/delete-connection.js';
import { createConnectSession } from './connect/sessions/create-connect-session.js';
import { createReconnectSession } from './connect/sessions/reconnect/create-reconnect-session.js';
import { listLogs } from './logs/list-logs.js';
import { getLog } from './logs/logId/get-log.js';

const API_VERSION = '1.0.0';

/**
 * Every REST route, in mounting order (fixed paths before parameterized ones: the bulk
 * `/connections/metadata` before `/connections/:connectionId`), which is also the OpenAPI document's.
 */
export function restRoutes(deps: RestDeps): RouteSpec[] {
  const integrations = new IntegrationsService(deps);
  return [
    listProviders(deps),
    getProvider(deps),
    listIntegrations(integrations),
    createIntegration(integrations),
    getIntegration(integrations),
    updateIntegration(integrations),
    deleteIntegration(integrations),
    ...connectionsMetadata(deps),
    ...connectionMetadata(deps),
    importConnection(deps),
    importConnectionDeprecated(deps),
    listConnections(deps),
    getConnection(deps),
    deleteConnection(deps),
    createConnectSession(deps),
    createReconnectSession(deps),
    listLogs(deps),
    getLog(deps),
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
