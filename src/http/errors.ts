import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { z } from 'zod';
import type { Logger } from '../app/log.js';

export interface ErrorDetail {
  path?: string;
  message: string;
  code?: string;
}

/** An error the API answers with `{ error: { code, message, errors? } }` and the given status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors?: ErrorDetail[],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const badRequest = (message: string, errors?: ErrorDetail[]) => new ApiError(400, 'invalid_request', message, errors);
export const notFound = (code: string, message: string) => new ApiError(404, code, message);

/** Turns a zod failure into a 400 listing every problem with its path. */
export function fromZod(err: z.ZodError, where: 'body' | 'query' | 'path' | 'headers'): ApiError {
  const errors = err.issues.map((i) => ({
    path: [where, ...i.path.map(String)].join('.'),
    message: i.message,
    code: i.code,
  }));
  const first = errors[0];
  return new ApiError(400, `invalid_${where}`, `Invalid ${where}: ${first ? `${first.path}: ${first.message}` : 'malformed'}`, errors);
}

/** Parses a part of the request with a zod schema, or throws a 400 ApiError. */
export function parse<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query' | 'path' | 'headers'): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw fromZod(result.error, where);
  return result.data;
}

export const notFoundRoute: RequestHandler = (req, _res, next) => {
  next(new ApiError(404, 'route_not_found', `No route for ${req.method} ${req.path}`));
};

/**
 * Last handler: every error becomes the JSON error body. Unknown errors are logged and answered
 * with a 500 that says nothing about internals (no stack trace, no message from a library).
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    let apiError: ApiError;
    if (err instanceof ApiError) apiError = err;
    else if (isBodyParserError(err)) {
      apiError =
        err.type === 'entity.too.large'
          ? new ApiError(413, 'payload_too_large', 'Request body is too large')
          : new ApiError(400, 'invalid_json', 'Request body is not valid JSON');
    } else {
      logger.error({ err, method: req.method, path: req.path }, 'unhandled error');
      apiError = new ApiError(500, 'internal_error', 'Internal error; see the service logs');
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    res.status(apiError.status).json({
      error: { code: apiError.code, message: apiError.message, ...(apiError.errors ? { errors: apiError.errors } : {}) },
    });
  };
}

function isBodyParserError(err: unknown): err is { type: string; status: number } {
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as { type?: unknown }).type === 'string' &&
    typeof (err as { status?: unknown }).status === 'number'
  );
}
