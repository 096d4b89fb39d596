/**
 * The caller's request body, either held in memory (small enough to send again, so the request can
 * be retried) or streamed once (large, or of unknown size beyond the limit) without retries.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';

export type RequestBody = { kind: 'none' } | { kind: 'buffered'; data: Buffer } | { kind: 'stream'; stream: Readable };

export const DEFAULT_REPLAY_LIMIT = 1024 * 1024;

/** True when the request carries a body (RFC 9112 section 6.1: a length or a transfer coding). */
export function hasBody(headers: IncomingHttpHeaders): boolean {
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
}

/**
 * Reads up to `limit` bytes of `incoming`. If it ends within the limit the body is buffered
 * (replayable); otherwise the bytes read so far and the rest of the stream are joined into one
 * stream, so nothing is held beyond the limit.
 */
export async function readBody(incoming: Readable, headers: IncomingHttpHeaders, limit: number): Promise<RequestBody> {
  if (!hasBody(headers)) return { kind: 'none' };
  const declared = Number(headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return { kind: 'stream', stream: incoming };
  const chunks: Buffer[] = [];
  let size = 0;
  const iterator = incoming[Symbol.asyncIterator]();
  for (;;) {
    const { value, done } = await iterator.next();
    if (done) return { kind: 'buffered', data: Buffer.concat(chunks, size) };
    const chunk = value as Buffer;
    chunks.push(chunk);
    size += chunk.length;
    if (size > limit) {
      async function* rest() {
        yield* chunks;
        for (;;) {
          const next = await iterator.next();
          if (next.done) return;
          yield next.value as Buffer;
        }
      }
      return { kind: 'stream', stream: Readable.from(rest(), { objectMode: false }) };
    }
  }
}

export function isReplayable(body: RequestBody): boolean {
  return body.kind !== 'stream';
}
