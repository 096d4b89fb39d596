import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import type { ResolvedEnvironment } from '../auth/environment-keys.js';
import type { ProxyRequestHandler } from './rest/routes/proxy.js';

/**
 * The two busiest endpoints, answered by the server's request listener before express sees the
 * request: express's own work per request (its request and response prototypes, the router's walk
 * of every route, the final handler) was, measured, as large a share of these paths' CPU as
 * Latchkey's own work.
 *
 * - every request under `/proxy` goes to the proxy, which works on node's messages anyway;
 * - `GET /connections/:connectionId` (the fetch) runs the very route the REST router mounts (its zod
 *   checks and handler, `answerRoute`), after the same secret-key check; a fetch it declines (HEAD,
 *   a path it cannot decode) reaches express, which answers it as before.
 *
 * Both are timed into the HTTP request metric under their route pattern and answer errors with the
 * app's JSON error body. Measured in docs/benchmarks.md (hot paths).
 */

/** The route patterns the request metric labels these with (as the router would). */
export const FETCH_ROUTE = '/connections/:connectionId';
export const PROXY_ROUTE = '/proxy';

/** `/proxy`, `/proxy/...` or `/proxy?...`, case ignored (as express's `use('/proxy')` matched). */
const PROXY_PATH = /^\/proxy(?:[/?]|$)/i;
/** One segment after `/connections`, an optional trailing slash, then the query (as express's non-strict route matches). */
const FETCH_PATH = /^\/connections\/([^/?]+)\/?(?:\?|$)/i;

export type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** A fetch as read from the request line: the path's connection ID decoded, the query parsed as express's "simple" parser does. */
export interface FetchCall {
  connectionId: string;
  rawQuery: Record<string, unknown>;
}

export interface DirectRoutes {
  /** Times the request into the HTTP request metric under `route`. */
  observe(req: IncomingMessage, res: ServerResponse, route: string): void;
  /** The secret key's check: the Environment, or throws the 401 (or the failed checks' 429) to answer. */
  authenticate(req: IncomingMessage): ResolvedEnvironment;
  proxy: ProxyRequestHandler;
  /**
   * The fetch route (`getConnection`), answered on `res`: at once when it can be (no promise), else
   * by the promise returned; throws or rejects with what the error handler answers.
   */
  fetch(req: IncomingMessage, res: ServerResponse, environment: ResolvedEnvironment, call: FetchCall): Promise<void> | undefined;
  /** Answers an error as the error handler of the app does. */
  answerError(req: IncomingMessage, res: ServerResponse, err: unknown): void;
}

/** The server's request listener: the proxy and the fetch answered by `direct`, everything else by `app`. */
export function withDirectRoutes(app: Listener, direct: DirectRoutes): Listener {
  return (req, res) => {
    const url = req.url ?? '';
    if (PROXY_PATH.test(url)) {
      const environment = authenticated(req, res, PROXY_ROUTE, direct);
      if (environment) direct.proxy(req, res, environment).catch((err: unknown) => direct.answerError(req, res, err));
      return;
    }
    const call = req.method === 'GET' ? fetchCall(url) : undefined;
    if (!call) return app(req, res);
    const environment = authenticated(req, res, FETCH_ROUTE, direct);
    if (environment) fetched(req, res, environment, call, direct);
  };
}

/** Runs the fetch; its error, thrown or rejected, answered as the app answers errors. */
function fetched(req: IncomingMessage, res: ServerResponse, environment: ResolvedEnvironment, call: FetchCall, direct: DirectRoutes): void {
  try {
    direct.fetch(req, res, environment, call)?.catch((err: unknown) => direct.answerError(req, res, err));
  } catch (err) {
    direct.answerError(req, res, err);
  }
}

/** Starts the request's timer, then the secret key's check: the Environment, or undefined once the 401 is answered. */
function authenticated(req: IncomingMessage, res: ServerResponse, route: string, direct: DirectRoutes): ResolvedEnvironment | undefined {
  direct.observe(req, res, route);
  try {
    return direct.authenticate(req);
  } catch (err) {
    direct.answerError(req, res, err);
    return undefined;
  }
}

/** The fetch a request target names, or undefined for any other path (and for a malformed escape, which express answers as it answers any other). */
export function fetchCall(url: string): FetchCall | undefined {
  const match = FETCH_PATH.exec(url);
  if (!match) return undefined;
  let connectionId: string;
  try {
    connectionId = decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
  const q = url.indexOf('?');
  return { connectionId, rawQuery: q === -1 ? {} : parseQuery(url.slice(q + 1)) };
}
