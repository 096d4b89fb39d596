/**
 * A loopback HTTP proxy in front of a peer (an OAuth server's token endpoint, a webhook receiver) or
 * of the API server (plain HTTP in front, HTTPS behind), that a test can slow, cut or make fail: each
 * request is offered to `decide`, which may answer it with an injected status, delay it, or let it
 * through. Responses are streamed (watches pass through). Counts what it saw, and with `recordBodies`
 * keeps what crossed it (the secrets scan learns the codes, verifiers and tokens exchanged there).
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';

export interface ProxiedRequest {
  method: string;
  path: string;
  at: number;
  /** Passed-through requests: the upstream's status, and when its answer ended (ms since epoch). */
  status?: number;
  doneAt?: number;
  /** With `recordBodies`: the request body, and the response body once it has ended. */
  requestBody?: string;
  responseBody?: string;
}

/** What to do with one request: pass it on (after `delayMs`), or answer `status` without passing it on. */
export type Decision = { delayMs?: number; status?: number };

export interface HttpFaultProxy {
  url: string;
  port: number;
  /** Every request seen, in order, and the ones answered with an injected status. */
  seen: ProxiedRequest[];
  injected: Array<ProxiedRequest & { status: number }>;
  /** Decides per request; the default passes everything through. */
  decide: (req: ProxiedRequest) => Decision;
  /** Keep request and response bodies in `seen` (off by default: watches stream forever). */
  recordBodies: boolean;
  /** Drops every open connection (a watch through the proxy breaks). */
  cut(): void;
  close(): Promise<void>;
}

/**
 * `keepHost`: pass the client's Host header on (an OAuth 1 server checks signatures against the URL
 * it was called at, which is the proxy's); by default the target's own host is sent.
 */
export async function startHttpFaultProxy(target: string, opts: { keepHost?: boolean } = {}): Promise<HttpFaultProxy> {
  const upstream = new URL(target);
  const send = upstream.protocol === 'https:' ? httpsRequest : httpRequest;
  const sockets = new Set<Socket>();
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const seen: ProxiedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', at: Date.now() };
    p.seen.push(seen);
    if (p.recordBodies) record(req, (body) => (seen.requestBody = body));
    const decision = p.decide(seen);
    if (decision.delayMs) await new Promise((r) => setTimeout(r, decision.delayMs));
    if (decision.status) {
      req.resume();
      p.injected.push({ ...seen, status: decision.status });
      res.writeHead(decision.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', status: 'Failure', message: 'injected by the fault proxy', code: decision.status }));
      return;
    }
    const out = send(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: opts.keepHost ? req.headers : { ...req.headers, host: upstream.host },
        rejectUnauthorized: false,
      },
      (upRes) => {
        seen.status = upRes.statusCode;
        upRes.on('end', () => (seen.doneAt = Date.now()));
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        if (p.recordBodies) record(upRes, (body) => (seen.responseBody = body));
        upRes.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  };
  const server: Server = createServer((req, res) => void handle(req, res));
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  const p: HttpFaultProxy = {
    url: `http://127.0.0.1:${port}`,
    port,
    seen: [],
    injected: [],
    decide: () => ({}),
    recordBodies: false,
    cut() {
      for (const s of sockets) s.destroy();
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        p.cut();
      }),
  };
  return p;
}

/** Collects a stream's bytes as it flows on (to wherever it is piped). */
function record(stream: IncomingMessage, done: (body: string) => void): void {
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
}

/** A small seeded pseudo-random generator (mulberry32): a failing run can be replayed with its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
