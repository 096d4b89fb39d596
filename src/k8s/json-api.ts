import type { RequestOptions } from 'node:https';
import { Agent, ProxyAgent, interceptors, request, type buildConnector, type Dispatcher } from 'undici';
import { DEFAULT_API_TIMEOUT_MS } from './client.js';
import { ApiException, type KubeConfig } from './kubernetes-client.js';

/** How long one connection set-up (TLS material, credentials) is used before it is read from the configuration again. */
const RENEW_MS = 60_000;

export interface JsonRequest {
  /** Query parameters; undefined values are left out. */
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** Defaults to application/json. */
  contentType?: string;
}

/** Who is told of each call made with a KubeConfig: benchmarks that count API calls (see {@link observeJsonCalls}). */
const observers = new WeakMap<KubeConfig, (method: string, path: string) => void>();

/**
 * Tells `observer` of every plain-JSON call made with `kc` (its method and path, before it is sent),
 * until the returned function is called.
 * The typed clients' calls are seen in `kc.applySecurityAuthentication`; these do not pass there.
 */
export function observeJsonCalls(kc: KubeConfig, observer: (method: string, path: string) => void): () => void {
  observers.set(kc, observer);
  return () => {
    if (observers.get(kc) === observer) observers.delete(kc);
  };
}

interface Settings {
  server: string;
  headers: Record<string, string>;
  dispatcher: Dispatcher;
  agent: Agent | ProxyAgent;
  since: number;
}

/**
 * Kubernetes API calls as plain JSON over one pooled undici Agent, for the calls every refresh makes
 * (its Lease, its Secret, the Connection's status). client-node's typed clients run every request
 * and answer through their ObjectSerializer and build a fresh Agent per call (see
 * ./shared-dispatcher.ts): bench/api-call-costs.ts measured the four calls of a refresh at 6.3 ms of this
 * process's CPU with the typed clients against 3.0 ms as plain JSON. Objects come back as the API server
 * sent them: timestamps are strings, not Dates.
 *
 * The TLS material and the credentials come from the KubeConfig (`applyToHTTPSOptions`, which also runs
 * exec and token-file credentials) and are read again every minute, so rotated service account tokens
 * and certificates are picked up; the old Agent closes once its calls are done. Every call is bounded
 * (10 s by default); idempotent ones (GET, PUT, DELETE) are retried on a dropped connection, 429 or
 * 5xx, as the shared dispatcher does. A failed call throws client-node's `ApiException`, so
 * ./errors.ts reads it as it reads the client's.
 */
export class KubeJsonApi {
  private settings: Settings | undefined;
  private pending: Promise<Settings> | undefined;

  constructor(
    private readonly kc: KubeConfig,
    private readonly timeoutMs: number = DEFAULT_API_TIMEOUT_MS,
    private readonly now: () => number = Date.now,
  ) {}

  async get<T>(path: string, req: JsonRequest = {}): Promise<T> {
    return this.call<T>('GET', path, req);
  }

  async post<T>(path: string, body: unknown): Promise<T> {
    return this.call<T>('POST', path, { body });
  }

  async put<T>(path: string, body: unknown, query?: JsonRequest['query']): Promise<T> {
    return this.call<T>('PUT', path, { body, query });
  }

  async delete<T>(path: string, body?: unknown): Promise<T> {
    return this.call<T>('DELETE', path, { body });
  }

  async call<T>(method: Dispatcher.HttpMethod, path: string, req: JsonRequest = {}): Promise<T> {
    const { server, headers, dispatcher } = await this.current();
    observers.get(this.kc)?.(method, path);
    const payload = req.body === undefined ? undefined : JSON.stringify(req.body);
    const answer = await request(`${server}${path}${queryString(req.query)}`, {
      method,
      dispatcher,
      headers: payload === undefined ? headers : { ...headers, 'content-type': req.contentType ?? 'application/json' },
      body: payload,
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await answer.body.text();
    const parsed = text ? parseJson(text) : undefined;
    if (answer.statusCode >= 200 && answer.statusCode < 300) return parsed as T;
    const message = (parsed as { message?: unknown } | undefined)?.message;
    throw new ApiException(
      answer.statusCode,
      `HTTP-Code: ${answer.statusCode}\nMessage: ${typeof message === 'string' ? message : 'Kubernetes API error'}`,
      parsed ?? text,
      flatHeaders(answer.headers),
    );
  }

  /** Closes the pooled connections. */
  async close(): Promise<void> {
    const s = this.settings;
    this.settings = undefined;
    await s?.agent.close().catch(() => undefined);
  }

  private current(): Promise<Settings> | Settings {
    const s = this.settings;
    if (s && this.now() - s.since < RENEW_MS) return s;
    // One read of the configuration at a time; the calls meanwhile wait for it (a rotated token may
    // have replaced an expired one).
    this.pending ??= this.load().then(
      (next) => {
        this.pending = undefined;
        const old = this.settings;
        this.settings = next;
        // Calls may still be starting on the old Agent: it closes once every call could have ended.
        if (old) setTimeout(() => void old.agent.close().catch(() => undefined), this.timeoutMs + 1000).unref();
        return next;
      },
      (err: unknown) => {
        this.pending = undefined;
        throw err;
      },
    );
    return this.pending;
  }

  private async load(): Promise<Settings> {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new Error('No active cluster!');
    const opts: RequestOptions = {};
    await this.kc.applyToHTTPSOptions(opts);
    const headers: Record<string, string> = { accept: 'application/json' };
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) headers[k.toLowerCase()] = String(v);
    if (opts.auth) headers.authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    const tls: buildConnector.BuildOptions = {
      ca: opts.ca,
      cert: opts.cert,
      key: opts.key,
      pfx: opts.pfx,
      passphrase: opts.passphrase,
      servername: opts.servername,
      timeout: this.timeoutMs, // connecting is bounded as the call is
      ...(opts.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: opts.rejectUnauthorized }),
    };
    let agent: Agent | ProxyAgent;
    if (cluster.proxyUrl) {
      if (!/^https?:/.test(cluster.proxyUrl)) throw new Error(`the cluster's proxy ${cluster.proxyUrl} is not an HTTP(S) proxy`);
      agent = new ProxyAgent({ uri: cluster.proxyUrl, requestTls: tls });
    } else agent = new Agent({ connect: tls, keepAliveTimeout: 30_000 });
    const dispatcher = agent.compose(interceptors.retry({ maxRetries: 2, minTimeout: 50 }));
    return { server: cluster.server.replace(/\/+$/, ''), headers, dispatcher, agent, since: this.now() };
  }
}

/** Path segments of the API, escaped. */
export function apiPath(...segments: string[]): string {
  return segments.map((s) => s.split('/').map(encodeURIComponent).join('/')).join('/');
}

function queryString(query: JsonRequest['query']): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}
