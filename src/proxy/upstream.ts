/**
 * Sends a request to the provider with undici's dispatcher (callbacks, no streams per request),
 * never following redirects, and returns the response as soon as its headers arrive (the body may
 * still be arriving). Every new connection goes to an address the egress guard checked. Retries
 * what the caller asked to retry when the body can be sent again.
 *
 * undici rather than node:http: a forwarder on undici's `dispatch` measured about half the CPU per
 * request of the same forwarder on node:http with a keep-alive agent (docs/benchmarks.md, "Hot paths").
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { Agent, type Dispatcher } from 'undici';
import { ClientCertificateAgents } from '../egress/client-certificate-agents.js';
import { guardedConnector } from '../egress/connector.js';
import type { ClientCertificate } from '../domain/client-certificate.js';
import { LatchkeyError } from '../domain/errors.js';
import { egressRefusal, type EgressGuard } from '../egress/guard.js';
import type { RequestBody } from './request-body.js';
import { isRetryableStatus, parseRetryAfter } from '../domain/retry.js';
import { retryDelayMs, type RetryPolicy } from './retry-policy.js';
import { upstreamTargetOf, type UpstreamTarget } from './target-url.js';
import { UpstreamResponse } from './upstream-response.js';

export { UpstreamResponse } from './upstream-response.js';

export interface UpstreamRequest {
  method: string;
  /** A URL, or the target already parsed (no URL object per request). */
  url: URL | UpstreamTarget;
  /** Names in lower case (each name once). */
  headers: OutgoingHttpHeaders;
  body: RequestBody;
  /** The certificate the connection presents, for providers that require one on API calls (mutual TLS). */
  clientCertificate?: ClientCertificate;
}

export interface UpstreamAgents {
  dispatcher: Dispatcher;
  /** A pool like {@link dispatcher} whose connections present `certificate`. */
  withCertificate(certificate: ClientCertificate): Dispatcher;
  destroy(): void;
}

/** How long a pooled connection to a provider stays open unused (less when the provider's Keep-Alive says so). */
const IDLE_SOCKET_MS = 120_000;

/**
 * Keep-alive connection pools for provider requests (one set per proxy instance): up to 256
 * connections per provider origin. Every new connection goes to an address the egress guard
 * checked (TLS keeps the host name for SNI and the certificate check). `ca`: extra trusted
 * certificates (tests with their own CA).
 */
export function createAgents(guard: EgressGuard, tls: { ca?: string | Buffer } = {}): UpstreamAgents {
  const pool = (clientCertificate?: ClientCertificate) =>
    new Agent({
      connections: 256,
      keepAliveTimeout: IDLE_SOCKET_MS,
      keepAliveMaxTimeout: IDLE_SOCKET_MS,
      // The time a body may send nothing is each request's (sendOnce's `bodyIdleTimeoutMs`).
      bodyTimeout: 0,
      connect: guardedConnector(guard, { ...tls, ...(clientCertificate ? { clientCertificate } : {}) }),
    });
  const agent = pool();
  const certified = new ClientCertificateAgents(pool);
  return {
    dispatcher: agent,
    withCertificate: (certificate) => certified.get(certificate),
    destroy: () => {
      void agent.destroy().catch(() => {});
      certified.destroy();
    },
  };
}

/** The code of an attempt that could not reach the provider: retried, then answered as `provider_unreachable` (502). */
export const PROVIDER_UNREACHABLE = 'provider_unreachable';

/** One attempt's network failure (`cause`: the socket's error). */
export const providerUnreachable = (cause: unknown) =>
  new LatchkeyError('upstream', PROVIDER_UNREACHABLE, `provider unreachable: ${(cause as Error)?.message ?? String(cause)}`, { cause });

/**
 * Ends the attempts of one proxied request when its caller leaves. A plain list of callbacks: an
 * AbortController per request, and the abort listener node's client adds to and removes from its
 * signal, cost more than everything else Latchkey does on the proxy's path.
 */
export class Cancellation {
  private done = false;
  private readonly callbacks = new Set<() => void>();

  get cancelled(): boolean {
    return this.done;
  }

  cancel(): void {
    if (this.done) return;
    this.done = true;
    for (const callback of this.callbacks) callback();
    this.callbacks.clear();
  }

  /** Calls `callback` on cancellation (at once if cancelled already); returns what unregisters it. */
  onCancel(callback: () => void): () => void {
    if (this.done) {
      callback();
      return () => {};
    }
    this.callbacks.add(callback);
    return () => this.callbacks.delete(callback);
  }
}

/** A wait that ends early, rejecting, when the request is cancelled. */
function pause(ms: number, cancellation: Cancellation): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      resolve();
    }, ms);
    const off = cancellation.onCancel(() => {
      clearTimeout(timer);
      reject(new Error('cancelled'));
    });
  });
}

/**
 * Headers the dispatcher sets itself from the request (framing, the connection) or refuses: never
 * taken from the caller's. `expect: 100-continue` is not passed on: the body is sent as it comes.
 */
const SET_BY_DISPATCHER = new Set(['host', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'expect']);

/**
 * The request's headers as a flat list of names and values (what the dispatcher takes without a
 * copy per header). `Host` is the target's; the body's framing is the one this attempt sends.
 */
function headerList(req: UpstreamRequest, host: string): string[] {
  const list = ['host', host];
  const { headers, body } = req;
  for (const key in headers) {
    const value = headers[key];
    // Names are lower-case, so each is there once.
    const name = key.toLowerCase();
    if (value === undefined || SET_BY_DISPATCHER.has(name)) continue;
    if (body.kind !== 'stream' && name === 'content-length') continue;
    if (Array.isArray(value)) for (const v of value) list.push(name, v);
    else list.push(name, String(value));
  }
  if (body.kind === 'buffered') list.push('content-length', String(body.data.length));
  return list;
}

/**
 * One attempt. Resolves with the response (body not read yet) or rejects with a {@link PROVIDER_UNREACHABLE} error.
 * `bodyIdleTimeoutMs`: once the headers are in, the longest the body may send nothing (0: no limit); the
 * time the provider's socket is paused because the caller is not reading does not count (undici's body timeout).
 */
export function sendOnce(
  req: UpstreamRequest,
  agents: UpstreamAgents,
  cancellation: Cancellation,
  headersTimeoutMs: number,
  bodyIdleTimeoutMs = 0,
): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    const target = req.url instanceof URL ? upstreamTargetOf(req.url) : req.url;
    // Until the response: afterwards the caller's side stops it (a body still arriving is aborted when `res` closes).
    let off = () => {};
    const response = new UpstreamResponse(
      (started) => {
        off();
        resolve(started);
      },
      (err) => {
        off();
        const refusal = egressRefusal(err);
        // A policy refusal is the caller's problem (a 4xx), and never retried.
        if (refusal) reject(new LatchkeyError('forbidden', 'egress_refused', `The proxy refused the target: ${refusal.message}`));
        else reject(providerUnreachable(err));
      },
    );
    off = cancellation.onCancel(() => response.abort(new Error('the caller went away')));
    const { body } = req;
    (req.clientCertificate ? agents.withCertificate(req.clientCertificate) : agents.dispatcher).dispatch(
      {
        origin: target.origin,
        path: target.path,
        method: req.method,
        headers: headerList(req, target.host),
        body: body.kind === 'buffered' ? body.data : body.kind === 'stream' ? body.stream : null,
        headersTimeout: headersTimeoutMs,
        bodyTimeout: bodyIdleTimeoutMs,
      },
      response,
    );
  });
}

export interface SendResult {
  response: UpstreamResponse;
  attempts: number;
}

export interface SendOptions {
  policy: RetryPolicy;
  cancellation: Cancellation;
  headersTimeoutMs: number;
  /** See {@link sendOnce}. */
  bodyIdleTimeoutMs?: number;
  now: () => number;
  onRetry?: (reason: string, delayMs: number, attempt: number) => void;
}

/**
 * Sends with up to `policy.retries` retries of network errors and retryable statuses (only when the body is
 * replayable). The last response, whatever its status, is returned; the last network error becomes
 * a 502 `provider_unreachable`.
 */
export async function sendWithRetries(
  request: UpstreamRequest | (() => UpstreamRequest),
  agents: UpstreamAgents,
  opts: SendOptions,
): Promise<SendResult> {
  // A function builds each attempt anew: signatures with a nonce (OAuth 1, TBA, WSSE) must not be replayed.
  const build = typeof request === 'function' ? request : () => request;
  let req = build();
  const retries = req.body.kind === 'stream' ? 0 : opts.policy.retries;
  for (let attempt = 1; ; attempt++) {
    let response: UpstreamResponse | undefined;
    let failure: LatchkeyError | undefined;
    if (attempt > 1) req = build();
    try {
      response = await sendOnce(req, agents, opts.cancellation, opts.headersTimeoutMs, opts.bodyIdleTimeoutMs);
    } catch (err) {
      if (opts.cancellation.cancelled) throw new LatchkeyError('cancelled', 'client_closed_request', 'The caller went away');
      // A network failure may be retried; a refusal is the answer.
      if (err instanceof LatchkeyError && err.code !== PROVIDER_UNREACHABLE) throw err;
      failure = err as LatchkeyError;
    }
    const canRetry = attempt <= retries;
    if (response && !(canRetry && isRetryableStatus(response.statusCode))) return { response, attempts: attempt };
    const retryAfter = response ? parseRetryAfter(response.header('retry-after'), opts.now()) : undefined;
    const delay = canRetry ? retryDelayMs(opts.policy, attempt, retryAfter) : undefined;
    if (delay === undefined) {
      if (response) return { response, attempts: attempt };
      throw new LatchkeyError(
        'upstream',
        'provider_unreachable',
        `The provider could not be reached: ${failure!.message.replace(/^provider unreachable: /, '')}`,
      );
    }
    opts.onRetry?.(response ? String(response.statusCode) : 'network_error', delay, attempt);
    response?.drain();
    await pause(delay, opts.cancellation).catch(() => {
      throw new LatchkeyError('cancelled', 'client_closed_request', 'The caller went away');
    });
  }
}
