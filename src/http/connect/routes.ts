/**
 * HTTP routes of the Connect UI (public: the end user's browser has a session token, never the
 * secret key): the page and its script, the frontend client module, the small JSON API the page
 * calls with `Authorization: Bearer <session token>`, and the OAuth callback.
 */
import { readFileSync } from 'node:fs';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { z } from 'zod';
import { LatchkeyError } from '../../domain/errors.js';
import { parse, statusOf } from '../errors.js';
import { completeCallback, startOAuthFlow, submitForm, type ConnectDeps } from '../../connect/flows.js';
import { assertEmbeddersAllowed, frameAncestors, frameOrigins } from './embedding.js';
import { connectPage, embeddedConnectPage, redirectPage, resultPage } from './pages.js';
import { describeSessionForUi } from '../../connect/session-view.js';
import { lookCookieHeader, lookCookieName, lookOf as lookWithCookie } from './look.js';
import { openSession, type OpenSession } from '../../connect/session.js';
import { newBrowserBinding } from '../../auth/flow-state.js';
import { bindingCookieHeader, flowCookie, readBinding } from './flow-cookie.js';
import { imageSources } from './logo-sources.js';
import { providerLogoSvg } from '../../catalog/provider-logos.js';

/**
 * Headers of every HTML page; `frameAncestors` is `'none'` except on the embeddable page; `imgSrc`
 * admits Providers' logos on the pages that list integrations.
 */
function htmlHeaders(frameAncestorsValue = "'none'", imgSrc = "'self' data:"): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'content-security-policy': `default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src ${imgSrc}; base-uri 'none'; form-action 'none'; frame-ancestors ${frameAncestorsValue}`,
  };
}
const HTML_HEADERS = htmlHeaders();

const StartBody = z.strictObject({
  integration: z.string().min(1).max(63),
  connectionConfig: z.record(z.string(), z.string().max(1024)).optional(),
});
const FormBody = z.strictObject({
  integration: z.string().min(1).max(63),
  values: z.record(z.string(), z.string().max(4096)),
  connectionConfig: z.record(z.string(), z.string().max(1024)).optional(),
});
const CallbackQuery = z.looseObject({ state: z.string().max(16_384).optional() });
const BindBody = z.strictObject({ binding: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be the binding from oauth/start') });
/** A form_post callback's fields: strings only (a repeated field is not valid OAuth). */
const CallbackForm = z.record(z.string().max(256), z.string().max(16_384));
const EmbedQuery = z.strictObject({
  namespace: z
    .string()
    .max(63)
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a namespace name'),
  lang: z.string().max(16).optional(),
  theme: z.string().max(16).optional(),
});
/**
 * Nango's SDK adds apiURL, detectClosedAuthWindow, lang and theme (and `embedded` in its versions
 * with `embed()`): lang and theme choose the page's language and theme (`lookOf`); the others are
 * accepted, not used (the UI calls its own origin). `session_token` (optional, in the application's
 * `baseURL`) narrows who may frame the page to that token's Environment's allowed origins.
 */
const NangoQuery = z.strictObject({
  namespace: EmbedQuery.shape.namespace.optional(),
  session_token: z.string().max(8192).optional(),
  apiURL: z.string().max(2048).optional(),
  detectClosedAuthWindow: z.string().max(8).optional(),
  embedded: z.string().max(8).optional(),
  lang: z.string().max(16).optional(),
  theme: z.string().max(16).optional(),
});
/**
 * `embedder`: the origins that framed (parent first, then the frames above it where the browser
 * tells) or opened the Nango-protocol page; given, each must be allowed by the session's Environment.
 */
const SessionQuery = z.looseObject({
  embedder: z.union([z.string().max(512), z.array(z.string().max(512)).min(1).max(16)]).optional(),
});

/** Compiled browser assets, read once from dist (they sit next to this module's output). */
function asset(relative: string): () => string {
  let cached: string | undefined;
  return () => (cached ??= readFileSync(new URL(relative, import.meta.url), 'utf8').replace(/\n\/\/# sourceMappingURL=.*$/m, '\n'));
}
const pageScript = asset('../../browser/connect-page.js');
const clientScript = asset('../../browser/connect-client.js');
const clientTypes = asset('../../browser/connect-client.d.ts');

function sessionOf(deps: ConnectDeps, req: Request): OpenSession {
  const match = /^Bearer ([\x21-\x7e]{1,8192})$/i.exec(req.headers.authorization?.trim() ?? '');
  return openSession(deps.catalog, match?.[1], deps.clock.now());
}

type Handler = (req: Request, res: Response) => Promise<void> | void;
const wrap =
  (h: Handler): RequestHandler =>
  async (req, res, next) => {
    try {
      await h(req, res);
    } catch (err) {
      next(err);
    }
  };

export function connectRoutes(deps: ConnectDeps): Router {
  const router = express.Router();
  const basePath = new URL(deps.config.publicBaseUrl).pathname.replace(/\/+$/, '');
  const json = express.json({ limit: '64kb', strict: true, type: () => true });
  // Read per request: the public URL decides Secure and the `__Host-` prefix.
  const cookieOf = () => flowCookie(deps.config.publicBaseUrl);
  const lookOf = (req: Request) => lookWithCookie(req, lookCookieName(deps.config.publicBaseUrl));
  // The callback's page is rendered in the look the end user had when the flow left for the provider.
  const keepLook = (req: Request, res: Response) => res.append('set-cookie', lookCookieHeader(lookOf(req), deps.config.publicBaseUrl));
  const setBinding = (res: Response, session: OpenSession, binding: string) =>
    res.append('set-cookie', bindingCookieHeader(cookieOf(), binding, session.claims.exp - deps.clock.now() / 1000));

  router.get('/connect', (req, res) => {
    // `/connect/` (the address Nango's frontend SDK frames: its baseURL plus "/") speaks that SDK's protocol.
    if (req.path.endsWith('/')) {
      nangoPage(req, res);
      return;
    }
    res.set(htmlHeaders("'none'", imageSources(deps.catalog))).send(connectPage(basePath, lookOf(req)));
  });
  /** An error page in the end user's language and theme. */
  function errorPage(req: Request, res: Response, status: number, code: string, message: string, providerConfigKey?: string): void {
    res
      .status(status)
      .set(HTML_HEADERS)
      .send(
        resultPage(basePath, lookOf(req), { type: 'error', error: { code, message }, ...(providerConfigKey ? { providerConfigKey } : {}) }),
      );
  }

  function invalidAddress(req: Request, res: Response): void {
    errorPage(req, res, 400, 'invalid_request', 'This Connect UI address is not valid.');
  }

  /**
   * Nango's `openConnectUI` frames `{baseURL}/?apiURL=…&lang=…` and sends the token by postMessage
   * once the page says `ready`. Any origin may frame the page, which names no tenant's origins: it
   * shows nothing and takes no input until the server has accepted the token for the origins that
   * frame it (`/connect/api/session?embedder=`). A session token in `baseURL` (`?session_token=`)
   * narrows `frame-ancestors` to its Environment's allowed origins from the start.
   */
  function nangoPage(req: Request, res: Response): void {
    const query = NangoQuery.safeParse(req.query);
    if (!query.success) {
      return invalidAddress(req, res);
    }
    const { session_token: token, namespace: asked } = query.data;
    let namespace = '';
    if (token !== undefined) {
      let session: OpenSession;
      try {
        session = openSession(deps.catalog, token, deps.clock.now());
      } catch (err) {
        const e = err as LatchkeyError;
        return errorPage(req, res, statusOf(e), e.code, e.message);
      }
      if (asked !== undefined && asked !== session.namespace) {
        return invalidAddress(req, res);
      }
      namespace = session.namespace;
    }
    const origins = namespace ? frameOrigins(deps.catalog, namespace) : [];
    res
      .set(htmlHeaders(namespace ? frameAncestors(origins) : '*'))
      .send(
        embeddedConnectPage(basePath, { namespace: namespace || (asked ?? ''), allowedOrigins: origins, protocol: 'nango' }, lookOf(req)),
      );
  }
  // The page for an iframe: framed only by the Environment's spec.connectUI.allowedOrigins. The
  // namespace in the query is not secret (every session token carries it); the token comes by postMessage.
  router.get('/connect/embed', (req, res) => {
    const query = EmbedQuery.safeParse(req.query);
    if (!query.success) {
      return invalidAddress(req, res);
    }
    const { namespace } = query.data;
    const origins = frameOrigins(deps.catalog, namespace);
    res
      .set(htmlHeaders(frameAncestors(origins), imageSources(deps.catalog)))
      .send(embeddedConnectPage(basePath, { namespace, allowedOrigins: origins }, lookOf(req)));
  });
  // The popup an embedded Connect UI opens for an OAuth provider (providers refuse to be framed).
  router.get('/connect/redirect', (req, res) => {
    res.set(HTML_HEADERS).send(redirectPage(basePath, lookOf(req)));
  });
  // Shipped providers' logos: served here, so the end user's browser asks no third party for them.
  router.get('/connect/logos/:file', (req, res) => {
    const name = /^([a-z0-9][a-z0-9-]{0,62})\.svg$/.exec(String(req.params.file))?.[1];
    const svg = name ? providerLogoSvg(name) : undefined;
    if (!svg) {
      res.status(404).json({ error: { code: 'not_found', message: 'No such logo.' } });
      return;
    }
    res
      .set({
        'content-type': 'image/svg+xml',
        'cache-control': 'public, max-age=86400',
        'x-content-type-options': 'nosniff',
        // The application's own pages may show GET /providers' logo_url.
        'cross-origin-resource-policy': 'cross-origin',
        'content-security-policy': "default-src 'none'",
      })
      .send(svg);
  });
  router.get('/connect/ui.js', (_req, res) => {
    res
      .set({ 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' })
      .send(pageScript());
  });
  // The frontend client is imported by the application's own pages: any origin may load it.
  router.get('/connect/client.js', (_req, res) => {
    res
      .set({
        'content-type': 'text/javascript; charset=utf-8',
        'access-control-allow-origin': '*',
        'cache-control': 'no-cache',
        'x-content-type-options': 'nosniff',
      })
      .send(clientScript());
  });
  router.get('/connect/client.d.ts', (_req, res) => {
    res.set({ 'content-type': 'text/plain; charset=utf-8', 'access-control-allow-origin': '*' }).send(clientTypes());
  });

  router.get(
    '/connect/api/session',
    wrap((req, res) => {
      const session = sessionOf(deps, req);
      const embedders = [parse(SessionQuery, req.query, 'query').embedder ?? []].flat();
      if (embedders.length) assertEmbeddersAllowed(deps.catalog, session.namespace, embedders);
      res.set('cache-control', 'no-store').json({ data: describeSessionForUi(deps, session, lookOf(req).lang) });
    }),
  );
  router.post(
    '/connect/api/oauth/start',
    json,
    wrap(async (req, res) => {
      const session = sessionOf(deps, req);
      const body = parse(StartBody, req.body, 'body');
      // The flow is bound to this browser by a cookie. Where this answer cannot set it (the embedded
      // page: a third-party frame), the sign-in popup sets it through oauth/bind with `binding`.
      const binding = readBinding(cookieOf(), req) ?? newBrowserBinding();
      const url = await startOAuthFlow(deps, session, body.integration, body.connectionConfig ?? {}, binding);
      setBinding(res, session, binding);
      keepLook(req, res);
      res.set('cache-control', 'no-store').json({ data: { url, binding } });
    }),
  );
  // Sets the binding cookie in a first-party context (the embedded UI's sign-in popup). It needs the
  // session token in a header, so no link or cross-site form can plant a binding in another browser.
  router.post(
    '/connect/api/oauth/bind',
    json,
    wrap((req, res) => {
      const session = sessionOf(deps, req);
      const body = parse(BindBody, req.body, 'body');
      setBinding(res, session, body.binding);
      keepLook(req, res);
      res.set('cache-control', 'no-store').json({ data: { bound: true } });
    }),
  );
  router.post(
    '/connect/api/forms',
    json,
    wrap(async (req, res) => {
      const session = sessionOf(deps, req);
      const body = parse(FormBody, req.body, 'body');
      const { operation: _operation, ...result } = await submitForm(
        deps,
        session,
        body.integration,
        body.values,
        body.connectionConfig ?? {},
      );
      res.set('cache-control', 'no-store').status(201).json({ data: result });
    }),
  );

  // response_mode=form_post: a cross-site POST carries no SameSite=Lax cookie, so without one the
  // fields move to a GET (a top-level GET navigation does carry it); with one it completes here.
  const form = express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 50 });
  router.post('/oauth/callback', form, (req, res, next) => {
    const fields = CallbackForm.safeParse(req.body ?? {});
    if (!fields.success) {
      errorPage(req, res, 400, 'invalid_callback', 'This authorization response is not valid.');
      return;
    }
    const url = new URL(`${deps.config.publicBaseUrl}/oauth/callback`);
    for (const [k, v] of Object.entries(fields.data)) url.searchParams.append(k, v);
    if (!readBinding(cookieOf(), req)) {
      res.status(303).set({ location: url.href, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }).end();
      return;
    }
    callback(req, res, url).catch(next);
  });
  router.get('/oauth/callback', (req, res, next) => {
    callback(req, res, new URL(req.originalUrl, deps.config.publicBaseUrl)).catch(next);
  });

  async function callback(req: Request, res: Response, url: URL): Promise<void> {
    const sendPage = (status: number, html: string) => res.status(status).set(HTML_HEADERS).send(html);
    try {
      if (url.searchParams.getAll('state').length > 1) throw new LatchkeyError('invalid_input', 'invalid_callback', 'state is repeated');
      parse(CallbackQuery, Object.fromEntries(url.searchParams), 'query');
      const outcome = await completeCallback(deps, url, readBinding(cookieOf(), req));
      if (outcome.result) {
        const { providerConfigKey, connectionId } = outcome.result;
        const integration = outcome.namespace ? deps.catalog.getIntegration(outcome.namespace, providerConfigKey) : undefined;
        const provider = integration && deps.catalog.getProvider(integration.spec.provider);
        const name = integration?.spec.displayName ?? provider?.spec.displayName ?? providerConfigKey;
        sendPage(
          200,
          resultPage(basePath, lookOf(req), { type: 'connect', providerConfigKey, ...(connectionId ? { connectionId } : {}) }, name),
        );
        return;
      }
      const e = outcome.error ?? new LatchkeyError('invalid_input', 'invalid_state', 'This authorization response is not valid.');
      errorPage(req, res, statusOf(e), e.code, e.message, outcome.providerConfigKey);
    } catch (err) {
      if (err instanceof LatchkeyError) {
        errorPage(req, res, 400, 'invalid_callback', 'This authorization response is not valid.');
        return;
      }
      deps.logger.error({ err: (err as Error).message, path: req.path }, 'OAuth callback failed');
      errorPage(req, res, 503, 'temporarily_unavailable', 'The connection could not be saved right now. Please try again in a moment.');
    }
  }
  return router;
}
