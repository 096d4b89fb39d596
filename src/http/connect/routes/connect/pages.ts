/** `GET /connect` (and `/connect/`, Nango's frontend SDK protocol), `/connect/embed`, `/connect/redirect`: the Connect UI's HTML pages. */
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { openSession, type OpenSession } from '../../../../connect/session.js';
import type { LatchkeyError } from '../../../../domain/errors.js';
import { statusOf } from '../../../errors.js';
import { frameAncestors, frameOrigins } from '../../embedding.js';
import { imageSources } from '../../logo-sources.js';
import { connectPage, embeddedConnectPage, redirectPage } from '../../pages.js';
import { HTML_HEADERS, htmlHeaders, type ConnectHttp } from '../connect-http.js';

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

/** `GET /connect`; `/connect/` (the address Nango's frontend SDK frames: its baseURL plus "/") speaks that SDK's protocol. */
export function connectPageRoute(http: ConnectHttp): RequestHandler {
  const nango = nangoPage(http);
  return (req, res, next) => {
    if (req.path.endsWith('/')) {
      nango(req, res, next);
      return;
    }
    res.set(htmlHeaders("'none'", imageSources(http.deps.catalog))).send(connectPage(http.basePath, http.lookOf(req)));
  };
}

/**
 * Nango's `openConnectUI` frames `{baseURL}/?apiURL=…&lang=…` and sends the token by postMessage
 * once the page says `ready`. Any origin may frame the page, which names no tenant's origins: it
 * shows nothing and takes no input until the server has accepted the token for the origins that
 * frame it (`/connect/api/session?embedder=`). A session token in `baseURL` (`?session_token=`)
 * narrows `frame-ancestors` to its Environment's allowed origins from the start.
 */
function nangoPage(http: ConnectHttp): RequestHandler {
  const { deps } = http;
  return (req, res) => {
    const query = NangoQuery.safeParse(req.query);
    if (!query.success) {
      return http.invalidAddress(req, res);
    }
    const { session_token: token, namespace: asked } = query.data;
    let namespace = '';
    if (token !== undefined) {
      let session: OpenSession;
      try {
        session = openSession(deps.catalog, token, deps.clock.now());
      } catch (err) {
        const e = err as LatchkeyError;
        return http.errorPage(req, res, statusOf(e), e.code, e.message);
      }
      if (asked !== undefined && asked !== session.namespace) {
        return http.invalidAddress(req, res);
      }
      namespace = session.namespace;
    }
    const origins = namespace ? frameOrigins(deps.catalog, namespace) : [];
    res
      .set(htmlHeaders(namespace ? frameAncestors(origins) : '*'))
      .send(
        embeddedConnectPage(
          http.basePath,
          { namespace: namespace || (asked ?? ''), allowedOrigins: origins, protocol: 'nango' },
          http.lookOf(req),
        ),
      );
  };
}

/**
 * `GET /connect/embed`: the page for an iframe, framed only by the Environment's
 * spec.connectUI.allowedOrigins. The namespace in the query is not secret (every session token
 * carries it); the token comes by postMessage.
 */
export function embedPageRoute(http: ConnectHttp): RequestHandler {
  return (req, res) => {
    const query = EmbedQuery.safeParse(req.query);
    if (!query.success) {
      return http.invalidAddress(req, res);
    }
    const { namespace } = query.data;
    const origins = frameOrigins(http.deps.catalog, namespace);
    res
      .set(htmlHeaders(frameAncestors(origins), imageSources(http.deps.catalog)))
      .send(embeddedConnectPage(http.basePath, { namespace, allowedOrigins: origins }, http.lookOf(req)));
  };
}

/** `GET /connect/redirect`: the popup an embedded Connect UI opens for an OAuth provider (providers refuse to be framed). */
export function redirectPageRoute(http: ConnectHttp): RequestHandler {
  return (req, res) => {
    res.set(HTML_HEADERS).send(redirectPage(http.basePath, http.lookOf(req)));
  };
}
