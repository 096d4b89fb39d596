/**
 * The operations dashboard for the teams that run Latchkey: the page, its script and stylesheet,
 * sign-in/out, and a JSON API behind the session cookie. The API reuses the REST routes that are
 * safe to show in a browser (logs, deletion, connect sessions: the same validation and errors) and
 * adds views that never contain a credential in full.
 */
import { readFileSync } from 'node:fs';
import express, { type Router } from 'express';
import { z } from 'zod';
import type { EnvironmentKeys } from '../../auth/environment-keys.js';
import { throttled, type FailedAuthThrottle } from '../failed-auth-throttle.js';
import { ConnectionNotFoundError, RefreshError } from '../../auth/refresh/token-refresher.js';
import type { AppContext } from '../../context/app-context.js';
import { environmentWithKey } from '../../connect/session.js';
import { LatchkeyError } from '../../domain/errors.js';
import { parse } from '../errors.js';
import { environmentOf } from '../secret-key-auth.js';
import { mountRoutes } from '../rest/routes/define.js';
import { restDeps, restRoutes } from '../rest/routes/index.js';
import { refreshFailure, unknownConnection } from '../rest/routes/connections.js';
import { DASHBOARD_CSS, dashboardPage } from './page.js';
import { requireSession, sameOriginOnly, sessionEnvironment, signIn, signOut, type SessionDeps } from './session.js';
import { connectionDetail, integrationsView, searchConnections, STATES } from './views.js';

/** REST operations the dashboard calls as they are (none returns a credential). */
const REUSED = new Set(['listLogs', 'getLog', 'deleteConnection', 'createConnectSession', 'createReconnectSession']);

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const HEADERS = {
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy': CSP,
};

const SignInBody = z.strictObject({ secret_key: z.string().min(1).max(512) });
const ConnectionsQuery = z.strictObject({
  search: z.string().max(320).optional(),
  integration: z.string().max(63).optional(),
  state: z.enum(STATES).optional(),
  cursor: z.string().max(1024).optional(),
  limit: z.coerce.number().int().min(1).max(200).optional(),
});
const ConnectionRef = z.strictObject({ integration: z.string().min(1).max(63), connection_id: z.string().min(1).max(255) });

function asset(relative: string): () => string {
  let cached: string | undefined;
  return () => (cached ??= readFileSync(new URL(relative, import.meta.url), 'utf8').replace(/\n\/\/# sourceMappingURL=.*$/m, '\n'));
}
const script = asset('../../browser/dashboard.js');

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

  router.get('/dashboard', (_req, res) => {
    res.set({ ...HEADERS, 'content-type': 'text/html; charset=utf-8' }).send(dashboardPage(basePath));
  });
  router.get('/dashboard/dashboard.js', (_req, res) => {
    res.set({ ...HEADERS, 'content-type': 'text/javascript; charset=utf-8' }).send(script());
  });
  router.get('/dashboard/dashboard.css', (_req, res) => {
    res.set({ ...HEADERS, 'content-type': 'text/css; charset=utf-8' }).send(DASHBOARD_CSS);
  });

  const api = express.Router();
  api.use((_req, res, next) => {
    res.set(HEADERS);
    next();
  });
  api.use(sameOriginOnly());
  api.post('/session', json, (req, res, next) => {
    try {
      const env = throttled(ctx.authThrottle, 'dashboard', req, () => signIn(session, res, parse(SignInBody, req.body, 'body').secret_key));
      res.status(201).json({ namespace: env.namespace, environment: env.name });
    } catch (err) {
      next(err);
    }
  });
  api.delete('/session', (_req, res) => {
    signOut(session, res);
    res.status(204).end();
  });
  api.get('/session', (req, res, next) => {
    const env = sessionEnvironment(session, req);
    if (!env) return next(new LatchkeyError('unauthenticated', 'not_signed_in', "Sign in with the environment's secret key"));
    res.json({ namespace: env.namespace, environment: env.name, mode: env.resource.spec.mode ?? 'production' });
  });

  api.use(requireSession(session));
  api.get('/integrations', async (_req, res, next) => {
    try {
      res.json({ integrations: await integrationsView(ctx, environmentOf(res).namespace, ctx.config.publicBaseUrl) });
    } catch (err) {
      next(err);
    }
  });
  api.get('/connections', async (req, res, next) => {
    try {
      const q = parse(ConnectionsQuery, { ...(req.query as object) }, 'query');
      res.json(await searchConnections(ctx.connectionScans, environmentOf(res).namespace, { ...q, limit: q.limit ?? 25 }, ctx.clock.now()));
    } catch (err) {
      next(err);
    }
  });
  api.get('/connection', async (req, res, next) => {
    try {
      const q = parse(ConnectionRef, { ...(req.query as object) }, 'query');
      const conn = await ctx.connections.findConnection(environmentOf(res).namespace, q.integration, q.connection_id);
      if (!conn) throw unknownConnection(q.connection_id, q.integration);
      res.json(connectionDetail(conn, ctx.clock.now()));
    } catch (err) {
      next(err);
    }
  });
  api.post('/connection/refresh', json, async (req, res, next) => {
    try {
      const b = parse(ConnectionRef, req.body, 'body');
      const namespace = environmentOf(res).namespace;
      try {
        const conn = await deps.refresher.ensureFresh(namespace, b.integration, b.connection_id, { force: true, reason: 'fetch' });
        res.json(connectionDetail(conn, ctx.clock.now()));
      } catch (err) {
        if (err instanceof ConnectionNotFoundError) throw unknownConnection(b.connection_id, b.integration);
        if (err instanceof RefreshError) throw refreshFailure(err);
        throw err;
      }
    } catch (err) {
      next(err);
    }
  });
  api.use(json);
  mountRoutes(
    api,
    restRoutes(deps).filter((r) => REUSED.has(r.operationId)),
  );
  router.use('/dashboard/api', api);
  return router;
}
