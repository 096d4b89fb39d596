/**
 * The one error type of Latchkey: what went wrong (`kind`, which the HTTP layer maps to a status),
 * a stable `code` clients can branch on, and a message safe to show (never a token, key or code).
 * Catchers tell errors apart by their code (`hasCode`), never by `err.name`. A subclass exists only
 * where its catchers read data it carries: `MissingTemplateValueError.keys`, `RefreshError`
 * (`permanent`, `providerError`, `logId`), `CredentialExchangeError` (`problem`, `status`),
 * `JwtMintError` (`problem`, `keys`), `EgressRefusedError` (host, address, its class), `AccountChoiceNeeded`
 * (the accounts a `several: choose` step found), and
 * `TerminalError`, the work queue's contract (any kind and code may be terminal). A subclass still
 * has a kind and a code, so uncaught it is answered like any other. No other class extends Error in
 * src/ (test/http/error-kinds.unit.test.ts).
 */

/** What kind of failure this is; src/http/errors.ts maps each to one HTTP status. */
export type ErrorKind =
  /** The caller's input is wrong (400). */
  | 'invalid_input'
  /** No or an unknown credential (401). */
  | 'unauthenticated'
  /** Authenticated, but not allowed to do this (403). */
  | 'forbidden'
  /** What the request names does not exist (404). */
  | 'not_found'
  /** The request conflicts with the object's current state (409). */
  | 'conflict'
  /** The path exists but not with this method (405, with `Allow`). */
  | 'method_not_allowed'
  /** The request body is larger than accepted (413). */
  | 'too_large'
  /** The request body is of a media type not accepted here (415). */
  | 'unsupported_media_type'
  /** Too many requests from this client; try again after `retryAfterMs` (429). */
  | 'rate_limited'
  /** The stored connection cannot be used until the end user authorizes again (424). */
  | 'reauthorization_required'
  /** The caller went away before an answer (499: nothing is written back). */
  | 'cancelled'
  /** Our own configuration is incomplete or a bug (500). */
  | 'internal'
  /** The provider (or another upstream) failed or could not be reached (502). */
  | 'upstream'
  /** Not possible right now, try again later (503; `retryAfterMs` when known). */
  | 'unavailable';

/** One problem with one part of the input. */
export interface ErrorDetail {
  path?: string;
  message: string;
  code?: string;
}

export class LatchkeyError extends Error {
  readonly errors?: ErrorDetail[];
  readonly retryAfterMs?: number;

  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    /** `cause`: the error this one stands for (never answered; what a catcher may look into). */
    opts: { errors?: ErrorDetail[]; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message);
    this.name = 'LatchkeyError';
    if (opts.errors) this.errors = opts.errors;
    if (opts.retryAfterMs !== undefined) this.retryAfterMs = opts.retryAfterMs;
    if (opts.cause !== undefined) this.cause = opts.cause;
  }
}

/**
 * Whether `err` is an operation that ran out of time: `AbortSignal.timeout()` rejects a fetch (and the
 * Kubernetes client's calls and watches) with a DOMException named `TimeoutError`. Errors are matched by
 * class or code here, but DOMException is one class for every name and its numeric `code` is legacy
 * (and absent from the HTTP clients' own `AbortError`s), so its name is all that tells a timeout from
 * another failure: these two helpers are the one place that reads an error's name.
 */
export function isTimeout(err: unknown): boolean {
  return errorName(err) === 'TimeoutError';
}

/** Whether `err` is a timeout ({@link isTimeout}) or an abort (`AbortController.abort()`: `AbortError`). */
export function isAbortOrTimeout(err: unknown): boolean {
  const name = errorName(err);
  return name === 'TimeoutError' || name === 'AbortError';
}

function errorName(err: unknown): unknown {
  return typeof err === 'object' && err !== null ? (err as { name?: unknown }).name : undefined;
}

/** Whether `err` is a {@link LatchkeyError} with this code: how a catcher recognises an error. */
export function hasCode(err: unknown, code: string): err is LatchkeyError {
  return err instanceof LatchkeyError && err.code === code;
}

export const invalidInput = (code: string, message: string, errors?: ErrorDetail[]) =>
  new LatchkeyError('invalid_input', code, message, { errors });
export const notFound = (code: string, message: string) => new LatchkeyError('not_found', code, message);

/** The code of a provider's answer (or a value in it) larger than Latchkey reads or keeps. */
export const ANSWER_TOO_LARGE = 'provider_answer_too_large';

/** Such an answer: the provider's fault (502); nothing from it is stored. */
export const answerTooLargeError = (message: string) => new LatchkeyError('upstream', ANSWER_TOO_LARGE, message);

/** The answer-too-large error an error is or was caused by (libraries wrap what a fetch threw). */
export function findAnswerTooLarge(err: unknown): LatchkeyError | undefined {
  for (let e = err, i = 0; e && i < 8; e = (e as { cause?: unknown }).cause, i++) {
    if (hasCode(e, ANSWER_TOO_LARGE)) return e;
  }
  return undefined;
}

/**
 * A failure that retrying cannot fix (controller-runtime's TerminalError): a work queue drops the key
 * instead of backing off, and the next change of the object brings it back. `cause` is the error it
 * stands for.
 */
export class TerminalError extends LatchkeyError {
  constructor(kind: ErrorKind, code: string, message: string, options: { cause?: unknown } = {}) {
    super(kind, code, message, options);
    this.name = 'TerminalError';
  }
}
