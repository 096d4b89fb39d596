/**
 * Sends a request to the provider with node:http(s), never following redirects, and returns the
 * response as soon as its headers arrive (the body is still streaming). Retries what the caller
 * asked to retry when the body can be sent again.
 */
import { request as httpRequest, type Agent as HttpAgent, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import { pipeline } from 'node:stream/promises';
import { LatchkeyError } from '../domain/errors.js';
import { GuardedHttpAgent, GuardedHttpsAgent } from '../egress/agents.js';
import { egressRefusal, type EgressGuard } from '../egress/guard.js';
import type { RequestBody } from './request-body.js';
import { isRetryableStatus, parseRetryAfter } from '../domain/retry.js';
import { retryDelayMs, type RetryPolicy } from './retry-policy.js';

export interface UpstreamRequest {
  method: string;
  url: URL;
  headers: OutgoingHttpHeaders;
  body: RequestBody;
}

export interface UpstreamAgents {
  http: HttpAgent;
  https: HttpsAgent;
  destroy(): void;
}

/**
 * Keep-alive connection pools for provider requests (one per proxy instance); every new socket goes
 * to an address the egress guard checked.
 */
export function createAgents(guard: EgressGuard): UpstreamAgents {
  const opts = { keepAlive: true, maxSockets: 256, maxFreeSockets: 64, timeout: 120_000 };
  const http = new GuardedHttpAgent(guard, opts);
  const https = new GuardedHttpsAgent(guard, opts);
  return { http, https, destroy: () => (http.destroy(), https.destroy()) };
}

export class UpstreamNetworkError extends Error {
  constructor(override readonly cause: unknown) {
    super(`provider unreachable: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'UpstreamNetworkError';
  }
}

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

/** One attempt. Resolves with the response (body unread) or rejects with {@link UpstreamNetworkError}. */
export function sendOnce(
  req: UpstreamRequest,
  agents: UpstreamAgents,
  cancellation: Cancellation,
  headersTimeoutMs: number,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const isHttps = req.url.protocol === 'https:';
    const headers: OutgoingHttpHeaders = { ...req.headers, host: req.url.host };
    if (req.body.kind === 'buffered') {
      delete headers['transfer-encoding'];
      headers['content-length'] = String(req.body.data.length);
    } else if (req.body.kind === 'none') {
      delete headers['content-length'];
      delete headers['transfer-encoding'];
    }
    const outgoing = (isHttps ? httpsRequest : httpRequest)(req.url, {
      method: req.method,
      headers,
      agent: isHttps ? agents.https : agents.http,
    });
    const timer = setTimeout(() => outgoing.destroy(new Error(`no response headers within ${headersTimeoutMs} ms`)), headersTimeoutMs);
    // Until the response: afterwards the caller's pipe ends it (a body still streaming is destroyed with `res`).
    const off = cancellation.onCancel(() => outgoing.destroy(new Error('the caller went away')));
    outgoing.once('response', (res) => {
      clearTimeout(timer);
      off();
      resolve(res);
    });
    outgoing.once('error', (err) => {
      clearTimeout(timer);
      off();
      const refusal = egressRefusal(err);
      // A policy refusal is the caller's problem (a 4xx), and never retried.
      if (refusal) reject(new LatchkeyError('forbidden', 'egress_refused', `The proxy refused the target: ${refusal.message}`));
      else reject(new UpstreamNetworkError(err));
    });
    if (req.body.kind === 'buffered') outgoing.end(req.body.data);
    else if (req.body.kind === 'none') outgoing.end();
    else pipeline(req.body.stream, outgoing).catch((err: unknown) => outgoing.destroy(err as Error));
  });
}

export interface SendResult {
  response: IncomingMessage;
  attempts: number;
}

export interface SendOptions {
  policy: RetryPolicy;
  cancellation: Cancellation;
  headersTimeoutMs: number;
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
    let response: IncomingMessage | undefined;
    let failure: UpstreamNetworkError | undefined;
    if (attempt > 1) req = build();
    try {
      response = await sendOnce(req, agents, opts.cancellation, opts.headersTimeoutMs);
    } catch (err) {
      if (opts.cancellation.cancelled) throw new LatchkeyError('cancelled', 'client_closed_request', 'The caller went away');
      if (err instanceof LatchkeyError) throw err;
      failure = err as UpstreamNetworkError;
    }
    const canRetry = attempt <= retries;
    if (response && !(canRetry && isRetryableStatus(response.statusCode ?? 0))) return { response, attempts: attempt };
    const retryAfter = response ? parseRetryAfter(response.headers['retry-after'], opts.now()) : undefined;
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
    response?.resume();
    await pause(delay, opts.cancellation).catch(() => {
      throw new LatchkeyError('cancelled', 'client_closed_request', 'The caller went away');
    });
  }
}
