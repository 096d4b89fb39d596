/**
 * The one way Latchkey reads an answer from a provider or a receiver: up to a byte limit. A peer may
 * answer 100 MB (or never stop); reading that whole took the process past its memory limit and the
 * answer into a Secret. The body is streamed and counted; past the limit the stream is cancelled (the
 * connection closes, the rest is never read) and a `provider_answer_too_large` error ({@link answerTooLargeError}) is thrown. A
 * Content-Length over the limit is refused before any byte is read.
 */
import { answerTooLargeError, findAnswerTooLarge } from '../domain/errors.js';

/** Token and JSON answers: far above any real token answer, far below the process's memory. */
export const DEFAULT_ANSWER_MAX_BYTES = 1024 * 1024;

/** The limit a bounded answer was given, so readers use the configured one (see {@link boundAnswer}). */
const LIMIT = Symbol('latchkey.answerMaxBytes');
type Bounded = Response & { [LIMIT]?: number };

/** A provider's answer over the limit: nothing from it is kept (502, the provider's fault). */
const tooLarge = (limit: number) => answerTooLargeError(`The provider's answer is larger than ${limit} bytes; it was not read.`);

function declaredLength(res: Response): number | undefined {
  const v = res.headers.get('content-length');
  return v !== null && /^\d+$/.test(v.trim()) ? Number(v) : undefined;
}

/**
 * The same answer whose body stream errors with a `provider_answer_too_large` error ({@link answerTooLargeError}) (and cancels the source)
 * once more than `maxBytes` arrived, so a library that reads it itself (openid-client) is bounded
 * too. Throws at once, the body cancelled, when Content-Length says more than `maxBytes`.
 */
export function boundAnswer(res: Response, maxBytes: number): Response {
  const declared = declaredLength(res);
  if (declared !== undefined && declared > maxBytes) {
    res.body?.cancel().catch(() => undefined);
    throw tooLarge(maxBytes);
  }
  if (!res.body) return Object.assign(res, { [LIMIT]: maxBytes });
  const source = res.body.getReader();
  let seen = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await source.read();
      if (done) return controller.close();
      seen += value.byteLength;
      if (seen > maxBytes) {
        await source.cancel().catch(() => undefined);
        return controller.error(tooLarge(maxBytes));
      }
      controller.enqueue(value);
    },
    cancel: (reason) => source.cancel(reason),
  });
  const bounded = new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers }) as Bounded;
  bounded[LIMIT] = maxBytes;
  return bounded;
}

/** A fetch whose every answer is bounded by {@link boundAnswer}. */
export function boundedFetch(inner: typeof fetch, maxBytes: number): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => boundAnswer(await inner(input, init), maxBytes)) as typeof fetch;
}

/**
 * The body as bytes, at most `maxBytes` (default: the limit the answer was bounded with, else
 * {@link DEFAULT_ANSWER_MAX_BYTES}); throws a `provider_answer_too_large` error ({@link answerTooLargeError}) past it.
 */
export async function readAnswerBytes(res: Response, maxBytes?: number): Promise<Uint8Array> {
  const limit = maxBytes ?? (res as Bounded)[LIMIT] ?? DEFAULT_ANSWER_MAX_BYTES;
  const declared = declaredLength(res);
  if (declared !== undefined && declared > limit) {
    await res.body?.cancel().catch(() => undefined);
    throw tooLarge(limit);
  }
  if (!res.body) return new Uint8Array();
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let seen = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      seen += value.byteLength;
      if (seen > limit) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge(limit);
      }
      chunks.push(value);
    }
  } catch (err) {
    throw findAnswerTooLarge(err) ?? err;
  }
  return Buffer.concat(chunks);
}

/** The body as UTF-8 text, bounded (see {@link readAnswerBytes}). */
export async function readAnswerText(res: Response, maxBytes?: number): Promise<string> {
  return new TextDecoder().decode(await readAnswerBytes(res, maxBytes));
}

/** The body parsed as JSON, bounded; a SyntaxError when it is not JSON. */
export async function readAnswerJson(res: Response, maxBytes?: number): Promise<unknown> {
  return JSON.parse(await readAnswerText(res, maxBytes)) as unknown;
}

/** The body read as application/x-www-form-urlencoded, bounded. */
export async function readAnswerForm(res: Response, maxBytes?: number): Promise<URLSearchParams> {
  return new URLSearchParams(await readAnswerText(res, maxBytes));
}
