/**
 * The limits of a proxied answer still arriving after its headers (server-sent events: MCP's
 * Streamable HTTP, a provider's event feed): how long the provider may send nothing (undici's body
 * timeout, counted only while the caller reads) and, when the operator sets one, how long the
 * answer may last at all. An event stream stopped at a limit is ended cleanly: an SSE client (MCP's
 * SDK included) takes the end as "reconnect", resuming with `Last-Event-ID`; any other body is cut,
 * so the caller cannot take a truncated document for a whole one.
 */
import { hasCode, LatchkeyError } from '../domain/errors.js';
import type { UpstreamResponse } from './upstream-response.js';

export const DEFAULT_IDLE_MS = 300_000;

export type StreamLimit = 'idle' | 'max_duration';

/** The code of the reason given to undici when the proxy stops an answer at its maximum duration. */
const MAX_DURATION_CODE = 'stream_max_duration';

/** The limit an answer's failure came from, if it came from one. */
export function streamLimitOf(err: unknown): StreamLimit | undefined {
  if (hasCode(err, MAX_DURATION_CODE)) return 'max_duration';
  // undici's BodyTimeoutError: no byte for the request's `bodyTimeout`.
  return (err as { code?: unknown } | undefined)?.code === 'UND_ERR_BODY_TIMEOUT' ? 'idle' : undefined;
}

/** Whether the answer is an event stream (ended cleanly at a limit rather than cut). */
export function isEventStream(response: UpstreamResponse): boolean {
  return /^\s*text\/event-stream\s*(;|$)/i.test(response.header('content-type') ?? '');
}

/** Stops `response` after `maxMs` (0: never); returns what clears the timer. */
export function limitDuration(response: UpstreamResponse, maxMs: number): () => void {
  if (maxMs <= 0 || response.complete) return () => {};
  const timer = setTimeout(
    () => response.abort(new LatchkeyError('upstream', MAX_DURATION_CODE, `the answer streamed for ${maxMs} ms`)),
    maxMs,
  );
  timer.unref();
  return () => clearTimeout(timer);
}
