/**
 * The operations dashboard for the teams that run Latchkey: the page, its script and stylesheet,
 * sign-in/out, and a JSON API behind the session cookie. The API reuses the REST routes that are
 * safe to show in a browser (logs, deletion, connect sessions: the same validation and errors) and
 * adds views that never contain a credential in full. The wiring only: one file per route (or small
 * group), in folders that mirror the URL.
 */
import express, { type Router } from 'express';
import type { EnvironmentKeys } from '../../../auth/environment-keys.js';
import type { FailedAuthThrottle } from '../../failed-auth-throttle.js';
import type { AppContext } from '../../../context/app-context.js';
import { environmentWithKey } from '../../../connect/session.js';
import { mountRoutes } from '../../rest/routes/define.js';
import { restDeps, restRoutes } from '../../rest/routes/index.js';
import { requireSession, sameOriginOnly, type SessionDeps } from '../session.js';
import { HEADERS } from './headers.js';
import { pageRoute, scriptRoute, stylesheetRoute } from './dashboard/page.js';
import { sessionRoute, signInRoute, signOutRoute } from './dashboard/api/session.js';
import { integrationsRoute } from './dashboard/api/integrations.js';
import { connectionsRoute } from './dashboard/api/connections.js';
import { connectionRoute } from './dashboard/api/connection.js';
import { refreshRoute } from './dashboard/api/connection/refresh.js';

/** REST operations the dashboard calls as they are (none returns a credential). */
const REUSED = new Set(['listLogs', 'getLog', 'deleteConnection', 'createConnectSession', 'createReconnectSession']);

export function dashboardRoutes(ctx: AppContext & { keys: EnvironmentKeys; authThrottle: FailedAuthThrottle }): Router {
  const router = express.Router();
  const base = new URL(ctx.config.publicBaseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const session: SessionDeps = {
    keys: ctx.keys,
    clock: ctx.clock,
    secretKeyOf: (ns) => environmentWithKey(ctx.catalog, ns)?.secretKey,
    secureCookie: base.protocol === 'https:',
    cookiePath: `${basePath}/dashboard`,
  };
  const json = express.json({ limit: '16kb', strict: true, type: () => true });
  const deps = restDeps(ctx);

  router.get('/dashboard', pageRoute(basePath));
  router.get('/dashboard/dashboard.js', scriptRoute);
  router.get('/dashboard/dashboard.css', stylesheetRoute);

  const api = express.Router();
  api.use((_req, res, next) => {
    res.set(HEADERS);
    next();
  });
  api.use(sameOriginOnly());
  api.post('/session', json, signInRoute(session, ctx.authThrottle));
  api.delete('/session', signOutRoute(session));
  api.get('/session', sessionRoute(session));

  api.use(requireSession(session));
  api.get('/integrations', integrationsRoute(ctx));
  api.get('/connections', connectionsRoute(ctx));
  api.get('/connection', connectionRoute(ctx));
  api.post('/connection/refresh', json, refreshRoute(deps));
  api.use(json);
  mountRoutes(
    api,
    restRoutes(deps).filter((r) => REUSED.has(r.operationId)),
  );
  router.use('/dashboard/api', api);
  return router;
}
