import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler, Router } from 'express';
import type { z } from 'zod';
import type { ResolvedEnvironment } from '../../../auth/environment-keys.js';
import { apiMessage, isConflictRetriesExhausted, statusOf } from '../../../k8s/errors.js';
import { environmentOf } from '../../secret-key-auth.js';
import { LatchkeyError } from '../../../domain/errors.js';
import { parse } from '../../errors.js';
import { methodNotAllowed } from '../../method-not-allowed.js';
import { routeAccess, type AccessInput } from '../../access-table.js';

type Method = 'get' | 'post' | 'patch' | 'delete' | 'put';

export interface ResponseDoc {
  description: string;
  schema?: z.ZodType;
  headers?: Record<string, string>;
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  env: ResolvedEnvironment;
  /** The query as parsed before validation (`tags[...]` filters are read from it). */
  rawQuery: Record<string, unknown>;
  /** A request header's value (node joins repeated ones). */
  header(name: string): string | undefined;
}

export interface RouteResult {
  status: number;
  body: unknown;
  /** The body already serialized (then `body` is ignored): for an answer kept as text. */
  json?: string;
  headers?: Record<string, string>;
}

/**
 * One REST endpoint described as data: the zod schemas of its path, query and body, its documented
 * responses, and its handler. The same object mounts the express route and generates the OpenAPI
 * operation, so the document cannot drift from what is served.
 */
export interface RouteSpec<P = unknown, Q = unknown, B = unknown> {
  method: Method;
  /** Express path, e.g. `/connections/:connectionId`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  deprecated?: boolean;
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  body?: z.ZodType<B>;
  responses: Record<number, ResponseDoc>;
  /** Error statuses this route can answer (documented with the common error body). */
  errors: number[];
  handle(input: RouteInput<P, Q, B>): Promise<RouteResult> | RouteResult;
}

export function defineRoute<P, Q, B>(spec: RouteSpec<P, Q, B>): RouteSpec {
  return spec as unknown as RouteSpec;
}

/**
 * Mounts routes on an express router: validate params, query and body with zod, then answer JSON;
 * a path served with other methods answers 405 with `Allow`.
 */
export function mountRoutes(router: Router, routes: RouteSpec[]): void {
  for (const route of routes) router[route.method](route.path, routeHandler(route));
  router.use(methodNotAllowed(routes));
}

/** What a route is called with, as read from the request by express's router or by src/http/hot-routes.ts. */
export interface RouteCall {
  params: Record<string, unknown>;
  rawQuery: Record<string, unknown>;
  body: unknown;
  env: ResolvedEnvironment;
  req: IncomingMessage;
}

/** The express handler of one route (after the secret key's check has put the Environment on `res.locals`). */
export function routeHandler(route: RouteSpec): RequestHandler {
  return async (req, res, next) => {
    try {
      await answerRoute(
        route,
        { params: req.params, rawQuery: req.query as Record<string, unknown>, body: req.body, env: environmentOf(res), req },
        res,
      );
    } catch (err) {
      next(err);
    }
  };
}

/**
 * Validates params, query and body with zod, runs the route and writes its JSON answer; throws (or
 * rejects with) what the error handler answers (the cluster's errors a request can cause already
 * turned into 4xx/503). A route that answers synchronously is answered synchronously: no promise.
 */
export function answerRoute(route: RouteSpec, call: RouteCall, res: ServerResponse): Promise<void> | undefined {
  if (call.env.serviceAccount) return answerServiceAccount(route, call, res);
  let result: Promise<RouteResult> | RouteResult;
  try {
    const input = parseInput(route, call);
    const { req } = call;
    result = route.handle({ ...input, env: call.env, rawQuery: call.rawQuery, header: (name) => headerOf(req, name) });
  } catch (err) {
    throw fromCluster(err);
  }
  if (!(result instanceof Promise)) return void sendResult(res, result);
  return result.then(
    (r) => sendResult(res, r),
    (err: unknown) => {
      throw fromCluster(err);
    },
  );
}

/**
 * A ServiceAccount's request: its token is checked before its input is (a 401 before a 400, as with
 * the secret key), and RBAC decides before the route does anything. Each review is awaited only when
 * the cache has not decided it.
 */
async function answerServiceAccount(route: RouteSpec, call: RouteCall, res: ServerResponse): Promise<void> {
  const serviceAccount = call.env.serviceAccount!;
  try {
    const reviewing = serviceAccount.authenticate();
    if (reviewing) await reviewing;
    const input = parseInput(route, call);
    const { req } = call;
    const header = (name: string) => headerOf(req, name);
    const authorizing = serviceAccount.authorize(
      routeAccess(route.operationId, { params: input.params ?? {}, query: input.query ?? {}, body: input.body, header } as AccessInput),
    );
    if (authorizing) await authorizing;
    sendResult(res, await route.handle({ ...input, env: call.env, rawQuery: call.rawQuery, header }));
  } catch (err) {
    throw fromCluster(err);
  }
}

function parseInput(route: RouteSpec, call: RouteCall) {
  return {
    params: route.params ? parse(route.params, { ...call.params }, 'path') : undefined,
    query: route.query ? parse(route.query, { ...call.rawQuery }, 'query') : undefined,
    body: route.body ? parse(route.body, call.body, 'body') : undefined,
  };
}

function sendResult(res: ServerResponse, result: RouteResult): void {
  if (result.headers) for (const [name, value] of Object.entries(result.headers)) res.setHeader(name, value);
  sendJson(res, result.status, result.json ?? JSON.stringify(result.body) ?? '');
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * What `res.json` sends for a route's answer (the same body, `application/json; charset=utf-8`,
 * Content-Length; node leaves the body out for HEAD), written directly: express's `send` parses and
 * formats the Content-Type again on every answer, a visible share of the fetch path's CPU profile.
 */
function sendJson(res: ServerResponse, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** Errors from the Kubernetes API that a request can cause become 4xx/503, never a 500. */
function fromCluster(err: unknown): unknown {
  // Before any other LatchkeyError: its own message names the object and the write, not the request.
  if (isConflictRetriesExhausted(err))
    return new LatchkeyError('unavailable', 'busy', 'Too many concurrent updates of this connection; try again');
  if (err instanceof LatchkeyError) return err;
  const status = statusOf(err);
  if (status === 422 || status === 413 || status === 400)
    return new LatchkeyError('invalid_input', 'rejected_by_cluster', `The request was rejected: ${apiMessage(err)}`);
  return err;
}
