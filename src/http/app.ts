import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express, type Router } from 'express';
import type { AppContext } from '../context/app-context.js';
import { EnvironmentKeys } from '../auth/environment-keys.js';
import { httpRequestDuration } from '../platform/metrics.js';
import { authenticateRequest, requireSecretKey } from './secret-key-auth.js';
import { FailedAuthThrottle, DEFAULT_FAILED_AUTH_LIMITS } from './failed-auth-throttle.js';
import { answerableError, errorHandler, notFoundRoute, writeError } from './errors.js';
import type { Registry } from '../platform/metrics.js';
import { methodNotAllowed, routeMethodsOf } from './method-not-allowed.js';
import { proxyHandler } from './rest/routes/proxy.js';
import { registerRestApi, restDeps, restRoutes } from './rest/routes/index.js';
import { answerRoute, type RouteSpec } from './rest/routes/define.js';
import { withDirectRoutes, type Listener } from './hot-routes.js';
import { refresherFor } from '../connections/shared-refresher.js';
import { connectRoutes } from './connect/routes/index.js';
import { connectApiRateLimit, RateLimits } from './rate-limits.js';
import { ClientRegistrations } from '../k8s/client-registrations.js';
import { FlowRecords } from '../k8s/flow-records.js';
import { dashboardRoutes } from './dashboard/routes/index.js';
import { LastFetchedRecorder } from '../connections/last-fetched.js';
import { readiness } from '../k8s/readiness.js';
import { providerWebhookRoutes } from './provider-webhook-routes.js';
import { KubeAccessReviews, type AccessReviews } from '../k8s/access-reviews.js';
import { ServiceAccountAuth } from '../auth/service-account-auth.js';
import { ServiceAccountRequests } from './service-account-requests.js';
import { tokenExchangeRoutes } from './token-exchange.js';

export interface HttpContext extends AppContext {
  keys: EnvironmentKeys;
  authThrottle: FailedAuthThrottle;
  /** Requests whose bearer is a Kubernetes token (docs/workloads.md). */
  tokens: ServiceAccountRequests;
}

export interface AppOptions {
  lastFetched?: LastFetchedRecorder;
  /** The secret keys' index (one per process: the direct routes' listener shares the app's). */
  keys?: EnvironmentKeys;
  /** The REST routes (one set per process: the direct fetch runs the router's own `getConnection`). */
  routes?: RouteSpec[];
  /** Failed secret-key checks by source address (one per process: the direct routes share the app's). */
  authThrottle?: FailedAuthThrottle;
  /** The TokenReview and SubjectAccessReview calls (default: the API server's, through `ctx.kc`). */
  accessReviews?: AccessReviews;
  /** Kubernetes-token requests and their review caches (one per process: the direct routes share the app's). */
  tokens?: ServiceAccountRequests;
}

/**
 * The sidecar HTTP server's request listener: the proxy and the fetch, answered before express sees
 * the request (src/http/hot-routes.ts), and the express app below for everything else.
 */
export function createRequestListener(ctx: AppContext, opts: AppOptions = {}): Listener {
  const keys = opts.keys ?? new EnvironmentKeys(ctx.catalog);
  const authThrottle = opts.authThrottle ?? newAuthThrottle(ctx);
  const tokens = opts.tokens ?? newServiceAccountRequests(ctx, keys, authThrottle, opts.accessReviews);
  const routes = routesOf(ctx, opts);
  const fetch = routes.find((r) => r.operationId === 'getConnection');
  if (!fetch) throw new Error('the getConnection route is missing');
  const app = createApp(ctx, { ...opts, keys, routes, authThrottle, tokens });
  const timer = requestTimer(ctx.metrics);
  return withDirectRoutes(app, {
    observe: (req, res, route) => timer(req, res, () => route),
    authenticate: (req) => authenticateRequest(keys, authThrottle, req, tokens),
    // The proxy shares the process's one refresher with the REST API and the controller.
    proxy: proxyHandler({ ...ctx, refresher: refresherFor(ctx) }),
    fetch: (req, res, env, call) =>
      answerRoute(fetch, { params: { connectionId: call.connectionId }, rawQuery: call.rawQuery, body: undefined, env, req }, res),
    answerError: (req, res, err) => writeError(res, answerableError(err, ctx.logger, { method: req.method, path: pathOf(req.url) })),
  });
}

/** The REST routes given, or a new set (createRequestListener builds one and hands it to createApp: both share it). */
function routesOf(ctx: AppContext, opts: AppOptions): RouteSpec[] {
  return opts.routes ?? restRoutes(restDeps(ctx, lastFetchedOf(ctx, opts)));
}

/**
 * The express application: health and metrics, the REST API (secret-key authenticated, JSON), and
 * the public pages (Connect UI, OAuth callback). Requests under `/proxy` never reach it when it
 * serves through {@link createRequestListener}, nor do fetches (`GET /connections/:connectionId`) it
 * can read without express's help: the REST router below answers the others (HEAD among them).
 */
export function createApp(ctx: AppContext, opts: AppOptions = {}): Express {
  const keys = opts.keys ?? new EnvironmentKeys(ctx.catalog);
  const authThrottle = opts.authThrottle ?? newAuthThrottle(ctx);
  const http: HttpContext = {
    ...ctx,
    keys,
    authThrottle,
    tokens: opts.tokens ?? newServiceAccountRequests(ctx, keys, authThrottle, opts.accessReviews),
  };
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', true);
  app.set('query parser', 'simple');
  // No ETag: a SHA-1 of every JSON answer (credentials change under it, and no client of this API
  // revalidates); it was a visible share of the fetch path's CPU profile.
  app.set('etag', false);
  app.use(observeRequests(requestTimer(ctx.metrics)));

  const auth = requireSecretKey(http.keys, http.authThrottle, http.tokens);
  const routes = routesOf(ctx, opts);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => {
    const status = readiness(ctx.caches);
    res.status(status === 'ready' ? 200 : 503).json({ status });
  });
  app.get('/metrics', async (_req, res, next) => {
    try {
      res.set('content-type', ctx.metrics.contentType).send(await ctx.metrics.metrics());
    } catch (err) {
      next(err);
    }
  });

  // Public pages (no secret key): Connect UI, its session-token API, the OAuth callback.
  app.use('/connect/api', connectApiRateLimit(ctx, new RateLimits(ctx.config, () => ctx.clock.now())));
  const connect = connectRoutes({ ...ctx, flows: new FlowRecords(ctx.kc), registrations: new ClientRegistrations(ctx.kc) });
  app.use(onlyUnder(['/connect', '/oauth'], connect));
  app.use(onlyUnder(['/connect', '/oauth'], methodNotAllowed(routeMethodsOf(connect))));

  // Providers' webhooks (public: the provider's signature is the authentication).
  app.use(onlyUnder(['/webhooks'], providerWebhookRoutes(ctx)));

  // The operations dashboard (its own session cookie; not published by the Ingress).
  app.use(onlyUnder(['/dashboard'], dashboardRoutes(http)));

  // RFC 8693 token exchange: its own authentication (the subject token) and OAuth's error shape.
  app.use(
    tokenExchangeRoutes({
      keys: http.keys,
      tokens: http.tokens,
      throttle: http.authThrottle,
      refresher: refresherFor(ctx),
      clock: ctx.clock,
      logger: ctx.logger,
    }),
  );

  // REST API: every route behind the environment's secret key (or a ServiceAccount's token and RBAC), JSON bodies only.
  const api: Router = express.Router();
  api.use(auth);
  api.use(express.json({ limit: '1mb', strict: true, type: () => true }));
  registerRestApi(app, api, routes, ctx);
  app.use(api);

  app.use(notFoundRoute);
  app.use(errorHandler(ctx.logger));
  return app;
}

/** The process's Kubernetes-token authentication: review caches bounded by the config, refusals into the operation log. */
function newServiceAccountRequests(
  ctx: AppContext,
  keys: EnvironmentKeys,
  throttle: FailedAuthThrottle,
  reviews: AccessReviews = new KubeAccessReviews(ctx.kc),
): ServiceAccountRequests {
  const auth = new ServiceAccountAuth({
    reviews,
    now: () => ctx.clock.now(),
    audience: ctx.config.serviceAccountAudience,
    tokenReviewTtlMs: ctx.config.tokenReviewTtlSeconds * 1000,
    accessReviewTtlMs: ctx.config.accessReviewTtlSeconds * 1000,
    maxEntries: ctx.config.reviewCacheEntries,
    // Who was refused what, never the token.
    onDenied: (d) =>
      ctx.oplog?.record({ namespace: d.namespace, operation: 'access', outcome: 'failure', step: 'denied', messages: [d.message] }),
  });
  return new ServiceAccountRequests(auth, keys, throttle);
}

function newAuthThrottle(ctx: AppContext): FailedAuthThrottle {
  return new FailedAuthThrottle(ctx.metrics, () => ctx.clock.now(), {
    ...DEFAULT_FAILED_AUTH_LIMITS,
    burst: ctx.config.authFailuresBurst,
    perMinute: ctx.config.authFailuresPerMinute,
  });
}

function lastFetchedOf(ctx: AppContext, opts: AppOptions): LastFetchedRecorder {
  return opts.lastFetched ?? new LastFetchedRecorder({ ...ctx, intervalMs: ctx.config.lastFetchedIntervalSeconds * 1000 });
}

type RequestTimer = (req: IncomingMessage, res: ServerResponse, route: () => string) => void;

/** Times a request into the HTTP request metric, labelled once answered with the route pattern `route()` names. */
function requestTimer(metrics: Registry): RequestTimer {
  const histogram = httpRequestDuration(metrics);
  return (req, res, route) => {
    const end = histogram.startTimer();
    res.on('finish', () => end({ route: route(), method: req.method, status: String(res.statusCode) }));
  };
}

function observeRequests(timer: RequestTimer): express.RequestHandler {
  return (req, res, next) => {
    // The matched route pattern (bounded), never the raw path with its IDs.
    timer(
      req,
      res,
      () => (res.locals.route as string | undefined) ?? (req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched'),
    );
    next();
  };
}

/** The path of a request target, without its query (for log lines). */
function pathOf(url: string | undefined): string {
  const target = url ?? '/';
  const q = target.indexOf('?');
  return q === -1 ? target : target.slice(0, q);
}

/**
 * Runs `handler` only for paths under one of `prefixes` (whole segments, case ignored, as express
 * matches), so REST API requests skip the matchers of the Connect and dashboard routes. Unlike
 * `app.use(path, ...)` it leaves `req.url` whole: those routers declare full paths.
 */
function onlyUnder(prefixes: string[], handler: express.RequestHandler): express.RequestHandler {
  return (req, res, next) => {
    const path = req.path.toLowerCase();
    if (prefixes.some((p) => path === p || path.startsWith(`${p}/`))) handler(req, res, next);
    else next();
  };
}
