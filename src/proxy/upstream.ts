/**
 * Sends a request to the provider with node:http(s), never following redirects, and returns the
 * response as soon as its headers arrive (the body is still streaming). Retries what the caller
 * asked to retry when the body can be sent again.
 */
import { request as httpRequest, type Agent as HttpAgent, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import type { Socket } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { LatchkeyError } from '../domain/errors.js';
import { GuardedHttpAgent, GuardedHttpsAgent } from '../egress/agents.js';
import { egressRefusal, type EgressGuard } from '../egress/guard.js';
import type { RequestBody } from './request-body.js';
import { isRetryableStatus, parseRetryAfter } from '../domain/retry.js';
import { retryDelayMs, type RetryPolicy } from './retry-policy.js';
import { upstreamTargetOf, type UpstreamTarget } from './target-url.js';
import { rawHeaderValue } from './headers.js';

export interface UpstreamRequest {
  method: string;
  /** A URL, or the target already in the form http.request takes (no URL parsed per request). */
  url: URL | UpstreamTarget;
  /** Names in lower case (each name once, as node would merge them). */
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
  // No `timeout` option: with one, node's client adds and removes a socket 'timeout' listener for
  // every request (re-emitting on the request, where nobody listens: the wait for the answer has its
  // own timer in sendOnce). What the option does besides, closing pooled sockets idle that long, is
  // kept by idleTimeoutOnReturn.
  const opts = { keepAlive: true, maxSockets: 256, maxFreeSockets: 64 };
  const http = idleTimeoutOnReturn(new GuardedHttpAgent(guard, opts), IDLE_SOCKET_MS);
  const https = idleTimeoutOnReturn(new GuardedHttpsAgent(guard, opts), IDLE_SOCKET_MS);
  return { http, https, destroy: () => (http.destroy(), https.destroy()) };
}

/** How long a pooled socket to a provider stays open unused (less when the provider's Keep-Alive says so). */
const IDLE_SOCKET_MS = 120_000;

/**
 * node's Agent#keepSocketAlive (node 24) as it runs with `timeout: idleMs`: the socket returned to
 * the pool gets that idle timeout, shortened to a second before the server's `Keep-Alive: timeout=N`
 * (not kept at all when that leaves nothing); the agent destroys a pooled socket whose timeout fires.
 */
function idleTimeoutOnReturn<A extends HttpAgent>(agent: A, idleMs: number): A {
  const buffer = (agent as unknown as { agentKeepAliveTimeoutBuffer?: number }).agentKeepAliveTimeoutBuffer ?? 1000;
  agent.keepSocketAlive = (socket: Socket): boolean => {
    socket.setKeepAlive(true, (agent as unknown as { keepAliveMsecs: number }).keepAliveMsecs);
    socket.unref();
    let timeout = idleMs;
    let keep = true;
    // From the raw list: reading `res.headers` would make node build the headers object for this alone.
    const raw = (socket as unknown as { _httpMessage?: { res?: IncomingMessage } })._httpMessage?.res?.rawHeaders;
    const hint = raw && rawHeaderValue(raw, 'keep-alive');
    if (hint) {
      const seconds = /^timeout=(\d+)/.exec(String(hint))?.[1];
      if (seconds) {
        const serverHint = Math.max(Number.parseInt(seconds, 10) * 1000 - buffer, 0);
        if (serverHint === 0) keep = false;
        else if (serverHint < timeout) timeout = serverHint;
      }
    }
    if (socket.timeout !== timeout) socket.setTimeout(timeout);
    return keep;
  };
  return agent;
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

/**
 * The request's headers as the flat list of names and values `http.request` also takes: node then
 * writes the header block straight from it, without a `setHeader` (and its checks and copies) per
 * header. `Host` is the target's; the body's framing is the one this attempt sends.
 */
function headerList(req: UpstreamRequest, host: string): string[] {
  const list = ['host', host];
  const { headers, body } = req;
  for (const key in headers) {
    const value = headers[key];
    // Names are lower-case, so each is there once (node's setHeader would have merged them by lower-case name).
    const name = key.toLowerCase();
    if (value === undefined || name === 'host') continue;
    if (body.kind !== 'stream' && (name === 'content-length' || name === 'transfer-encoding')) continue;
    if (Array.isArray(value)) for (const v of value) list.push(name, v);
    else list.push(name, String(value));
  }
  if (body.kind === 'buffered') list.push('content-length', String(body.data.length));
  return list;
}

/** One attempt. Resolves with the response (body unread) or rejects with {@link UpstreamNetworkError}. */
export function sendOnce(
  req: UpstreamRequest,
  agents: UpstreamAgents,
  cancellation: Cancellation,
  headersTimeoutMs: number,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const target = req.url instanceof URL ? upstreamTargetOf(req.url) : req.url;
    const isHttps = target.protocol === 'https:';
    const outgoing = (isHttps ? httpsRequest : httpRequest)({
      protocol: target.protocol,
      hostname: target.hostname,
      port: target.port,
      path: target.path,
      method: req.method,
      headers: headerList(req, target.host),
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
