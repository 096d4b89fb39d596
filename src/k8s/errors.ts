import { hasCode, isAbortOrTimeout, LatchkeyError } from '../domain/errors.js';
import { ApiException } from './kubernetes-client.js';

/**
 * A failed API call's answer. client-node's ApiException from this process's bundled copy
 * (./kubernetes-client.ts) or from the package itself (what tests and tools load), recognised by shape.
 */
function apiException(err: unknown): ApiException<unknown> | undefined {
  if (err instanceof ApiException) return err;
  const e = err as { code?: unknown } | null;
  return e instanceof Error && typeof e.code === 'number' && 'body' in e && 'headers' in e ? (e as ApiException<unknown>) : undefined;
}

/** HTTP status of a failed Kubernetes API call, or undefined for network and other errors. */
export function statusOf(err: unknown): number | undefined {
  const api = apiException(err);
  if (api) return api.code;
  const code = (err as { code?: unknown; statusCode?: unknown } | null)?.statusCode ?? (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

export const isNotFound = (err: unknown): boolean => statusOf(err) === 404;
export const isConflict = (err: unknown): boolean => statusOf(err) === 409;

/** What `read` gives, or undefined when the API server answers 404 (any other failure is thrown as it is). */
export async function readOrUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Message the API server gave (for example a CEL rule's message), without the request details. */
export function apiMessage(err: unknown): string {
  const api = apiException(err);
  if (api) {
    const body = typeof api.body === 'string' ? safeJson(api.body) : api.body;
    const message = (body as { message?: unknown } | undefined)?.message;
    if (typeof message === 'string') return message;
    return `Kubernetes API error ${api.code}`;
  }
  return err instanceof Error ? err.message : String(err);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A create found the object there already (`already_exists`; the services turn it into their own answer). */
export const ALREADY_EXISTS = 'already_exists';
export const alreadyExists = (what: string) => new LatchkeyError('conflict', ALREADY_EXISTS, `${what} already exists`);

/** A write found no object to write to (`not_found`; the services turn it into their own answer). */
export const OBJECT_NOT_FOUND = 'not_found';
export const objectNotFound = (what: string) => new LatchkeyError('not_found', OBJECT_NOT_FOUND, `${what} not found`);

/**
 * A compare-and-swap write kept losing to other writers: `busy`, its cause the API server's last
 * answer. Services answer `busy` of their own too, so {@link isConflictRetriesExhausted} looks at both.
 */
export const conflictRetriesExhausted = (what: string, lastAnswer: unknown) =>
  new LatchkeyError('unavailable', 'busy', `${what}: too many concurrent updates; try again`, { cause: lastAnswer });

/** Whether `err` is {@link conflictRetriesExhausted}'s error (a `busy` caused by the API server's answers). */
export const isConflictRetriesExhausted = (err: unknown): boolean => hasCode(err, 'busy') && err.cause !== undefined;

/** Network failures of a call to the API server (undici's `fetch failed` names the cause's code). */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * The API server could not answer now: not reachable (stopped, restarting), our 10 s bound expired
 * (`makeBoundedApiClient`), or it said so itself (429, 503, 504, or a 500 from its storage, etcd).
 * Such a call can be retried later; callers answer 503, not 500.
 */
export function isApiUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (isAbortOrTimeout(e)) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (UNREACHABLE_CODES.has(code) || code.startsWith('UND_ERR_'))) return true;
    const api = apiException(e);
    if (api) {
      if (api.code === 429 || api.code === 503 || api.code === 504) return true;
      if (api.code === 500 && /etcdserver|context deadline exceeded|timeout/i.test(apiMessage(api))) return true;
      return false;
    }
  }
  return false;
}
