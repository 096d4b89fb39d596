import type { ServerResponse } from 'node:http';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { z } from 'zod';
import type { Logger } from '../platform/log.js';
import { LatchkeyError, type ErrorDetail, type ErrorKind } from '../domain/errors.js';
import { assertInputShape, type InputPart } from './input-shape.js';
import { isApiUnavailable } from '../k8s/errors.js';

export type { ErrorDetail } from '../domain/errors.js';

/** The one place an error kind becomes an HTTP status. */
const STATUS: Record<ErrorKind, number> = {
  invalid_input: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  reauthorization_required: 424,
  cancelled: 499,
  internal: 500,
  upstream: 502,
  unavailable: 503,
};

/** The HTTP status of any error: a {@link LatchkeyError}'s kind, else 500. */
export function statusOf(err: unknown): number {
  return err instanceof LatchkeyError ? STATUS[err.kind] : 500;
}

/** The JSON error body of the API and the Connect UI. */
export function errorBody(err: LatchkeyError): { error: { code: string; message: string; errors?: ErrorDetail[] } } {
  return { error: { code: err.code, message: err.message, ...(err.errors ? { errors: err.errors } : {}) } };
}

/** Turns a zod failure into a 400 listing every problem with its path. */
export function fromZod(err: z.ZodError, where: InputPart): LatchkeyError {
  const errors = err.issues.map((i) => ({
    path: [where, ...i.path.map(String)].join('.'),
    message: i.message,
    code: i.code,
  }));
  const first = errors[0];
  return new LatchkeyError(
    'invalid_input',
    `invalid_${where}`,
    `Invalid ${where}: ${first ? `${first.path}: ${first.message}` : 'malformed'}`,
    {
      errors,
    },
  );
}

/** Parses a part of the request with a zod schema (after the shape checks every part passes), or throws a 400. */
export function parse<S extends z.ZodType>(schema: S, value: unknown, where: InputPart): z.infer<S> {
  assertInputShape(value, where);
  const result = schema.safeParse(value);
  if (!result.success) throw fromZod(result.error, where);
  return result.data;
}

export const notFoundRoute: RequestHandler = (req, _res, next) => {
  next(new LatchkeyError('not_found', 'route_not_found', `No route for ${req.method} ${req.path}`));
};

/**
 * Last handler: every error becomes the JSON error body. Unknown errors are logged and answered
 * with a 500 that says nothing about internals (no stack trace, no message from a library).
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => writeError(res, answerableError(err, logger, { method: req.method, path: req.path }));
}

/**
 * What an error is answered with: a {@link LatchkeyError} as it is; the router's and the body
 * parser's errors as the 400 or 413 they are; anything else logged and answered with a 500 (or a
 * 503 when the Kubernetes API is down) that says nothing about internals.
 */
export function answerableError(err: unknown, logger: Logger, where: { method: string | undefined; path: string }): LatchkeyError {
  if (err instanceof LatchkeyError) return err;
  if (err instanceof URIError)
    // The router could not decode a path parameter (%ZZ, or bytes that are not UTF-8).
    return new LatchkeyError('invalid_input', 'invalid_path', 'Invalid path: malformed percent-encoding', {
      errors: [{ path: 'path', message: 'malformed percent-encoding', code: 'malformed_encoding' }],
    });
  if (isBodyParserError(err))
    return err.type === 'entity.too.large'
      ? new LatchkeyError('too_large', 'payload_too_large', 'Request body is too large')
      : new LatchkeyError('invalid_input', 'invalid_json', 'Request body is not valid JSON');
  if (isApiUnavailable(err)) {
    // The API server is down or restarting: nothing was decided, the client may retry.
    logger.warn({ err: errorSummary(err), ...where }, 'Kubernetes API unavailable');
    return API_UNAVAILABLE;
  }
  logger.error({ err, ...where }, 'unhandled error');
  return new LatchkeyError('internal', 'internal_error', 'Internal error; see the service logs');
}

/**
 * Writes the JSON error answer on node's response (express's, and the proxy's, which express does
 * not see); once an answer has started, it can only be ended.
 */
export function writeError(res: ServerResponse, error: LatchkeyError): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = JSON.stringify(errorBody(error));
  res.statusCode = statusOf(error);
  // Whole seconds, at least 1: a client reading "0" would retry at once.
  if (error.retryAfterMs !== undefined) res.setHeader('Retry-After', String(Math.max(1, Math.ceil(error.retryAfterMs / 1000))));
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

const API_UNAVAILABLE = new LatchkeyError('unavailable', 'api_unavailable', 'The Kubernetes API server is unavailable; try again shortly', {
  retryAfterMs: 2000,
});

/** Name and message of an error and of its cause (undici puts the network code there), without stacks. */
function errorSummary(err: unknown): string {
  const one = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  const cause = (err as { cause?: unknown }).cause;
  return (cause ? `${one(err)} (${one(cause)})` : one(err)).slice(0, 300);
}

function isBodyParserError(err: unknown): err is { type: string; status: number } {
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as { type?: unknown }).type === 'string' &&
    typeof (err as { status?: unknown }).status === 'number'
  );
}
