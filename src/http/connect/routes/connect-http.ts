/** What the Connect UI's route handlers share: the flows' dependencies, the base path, cookies, the look, the HTML headers and the error page. */
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { ConnectDeps } from '../../../connect/flows.js';
import { openSession, type OpenSession } from '../../../connect/session.js';
import { bindingCookieHeader, flowCookie, type FlowCookie } from '../flow-cookie.js';
import { lookCookieHeader, lookCookieName, lookOf as lookWithCookie } from '../look.js';
import { resultPage, type Look } from '../pages.js';

/**
 * Headers of every HTML page; `frameAncestors` is `'none'` except on the embeddable page; `imgSrc`
 * admits Providers' logos on the pages that list integrations.
 */
export function htmlHeaders(frameAncestorsValue = "'none'", imgSrc = "'self' data:"): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'content-security-policy': `default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src ${imgSrc}; base-uri 'none'; form-action 'none'; frame-ancestors ${frameAncestorsValue}`,
  };
}
export const HTML_HEADERS = htmlHeaders();

export interface ConnectHttp {
  deps: ConnectDeps;
  /** The path of the public base URL, without a trailing slash. */
  basePath: string;
  /** The JSON body parser of the page's API. */
  json: RequestHandler;
  /** The OAuth flow cookie: read per request, since the public URL decides Secure and the `__Host-` prefix. */
  cookieOf(): FlowCookie;
  /** The end user's language and theme. */
  lookOf(req: Request): Look;
  /** The callback's page is rendered in the look the end user had when the flow left for the provider. */
  keepLook(req: Request, res: Response): void;
  setBinding(res: Response, session: OpenSession, binding: string): void;
  /** An error page in the end user's language and theme. */
  errorPage(req: Request, res: Response, status: number, code: string, message: string, providerConfigKey?: string): void;
  invalidAddress(req: Request, res: Response): void;
}

export function connectHttp(deps: ConnectDeps): ConnectHttp {
  const basePath = new URL(deps.config.publicBaseUrl).pathname.replace(/\/+$/, '');
  const cookieOf = () => flowCookie(deps.config.publicBaseUrl);
  const lookOf = (req: Request) => lookWithCookie(req, lookCookieName(deps.config.publicBaseUrl));
  const errorPage: ConnectHttp['errorPage'] = (req, res, status, code, message, providerConfigKey) => {
    res
      .status(status)
      .set(HTML_HEADERS)
      .send(
        resultPage(basePath, lookOf(req), { type: 'error', error: { code, message }, ...(providerConfigKey ? { providerConfigKey } : {}) }),
      );
  };
  return {
    deps,
    basePath,
    json: express.json({ limit: '64kb', strict: true, type: () => true }),
    cookieOf,
    lookOf,
    keepLook: (req, res) => res.append('set-cookie', lookCookieHeader(lookOf(req), deps.config.publicBaseUrl)),
    setBinding: (res, session, binding) =>
      res.append('set-cookie', bindingCookieHeader(cookieOf(), binding, session.claims.exp - deps.clock.now() / 1000)),
    errorPage,
    invalidAddress: (req, res) => errorPage(req, res, 400, 'invalid_request', 'This Connect UI address is not valid.'),
  };
}

/** The session the page's API call names (`Authorization: Bearer <session token>`), or a 401. */
export function sessionOf(deps: ConnectDeps, req: Request): OpenSession {
  const match = /^Bearer ([\x21-\x7e]{1,8192})$/i.exec(req.headers.authorization?.trim() ?? '');
  return openSession(deps.catalog, match?.[1], deps.clock.now());
}

type Handler = (req: Request, res: Response) => Promise<void> | void;

/** An express handler whose errors (thrown or rejected) go to the error handler. */
export const wrap =
  (h: Handler): RequestHandler =>
  async (req, res, next) => {
    try {
      await h(req, res);
    } catch (err) {
      next(err);
    }
  };
