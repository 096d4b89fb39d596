/**
 * A loopback HTTP proxy in front of a peer (an OAuth server's token endpoint, a webhook receiver) or
 * of the API server (plain HTTP in front, HTTPS behind), that a test can slow, cut or make fail: each
 * request is offered to `decide`, which may answer it with an injected status, delay it, or let it
 * through. Responses are streamed (watches pass through). Counts what it saw, and with `recordBodies`
 * keeps what crossed it (the secrets scan learns the codes, verifiers and tokens exchanged there).
 *
 * A delayed or held request whose client went away meanwhile (it gave up, or was killed) is not passed
 * on: as far as the peer knows, it never left the client.
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
  /** The client's TCP port (tells which process sent it, see process-sockets.ts). */
  clientPort: number;
}

/**
 * What to do with one request: pass it on (after `delayMs`), or answer `status` without passing it
 * on, or pass it on and answer `replaceStatus` instead of the peer's answer (the peer acted; its
 * answer was lost on the way back).
 */
export type Decision = { delayMs?: number; status?: number; replaceStatus?: number };

export interface HttpFaultProxy {
  url: string;
  port: number;
  /** Every request seen, in order, and the ones answered with an injected status (`applied`: after the peer acted on it). */
  seen: ProxiedRequest[];
  injected: Array<ProxiedRequest & { status: number; applied: boolean }>;
  /** Requests not passed on because their client went away (or was dropped) while they were delayed or held. */
  dropped: ProxiedRequest[];
  /** Requests passed on to the peer and not yet answered by it. */
  inFlight: number;
  /** Holds every request not yet passed on until the returned function is called. */
  hold(): () => void;
  /** Drops the delayed or held requests of these client ports (their process is dead). */
  dropFrom(ports: Set<number>): void;
  /** Decides per request; the default passes everything through. */
  decide: (req: ProxiedRequest) => Decision;
  /** Keep request and response bodies in `seen` (off by default: watches stream forever). */
  recordBodies: boolean;
  /**
   * A request that waited longer than this here (delay and hold) is not passed on: its client is
   * about to give up, and a peer's answer that its client no longer reads is a loss of its own kind
   * (a rotated refresh token nobody keeps), not the delay under test.
   */
  maxWaitMs?: number;
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
  let gate: Promise<void> | undefined;
  const waiting = new Map<ProxiedRequest, { dropped: boolean }>();
  const injectedAnswer = (res: ServerResponse, status: number) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', status: 'Failure', message: 'injected by the fault proxy', code: status }));
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const seen: ProxiedRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      at: Date.now(),
      clientPort: req.socket.remotePort ?? 0,
    };
    p.seen.push(seen);
    if (p.recordBodies) record(req, (body) => (seen.requestBody = body));
    const decision = p.decide(seen);
    const mark = { dropped: false, counted: false };
    waiting.set(seen, mark);
    // A client that goes away while its request waits here is seen at once, not when the gate opens:
    // the close may not have been read yet when a test opens the gate right after its client gave up.
    const goneWhileWaiting = () => {
      if (!waiting.has(seen) || mark.counted) return;
      mark.dropped = mark.counted = true;
      p.dropped.push(seen);
    };
    res.on('close', goneWhileWaiting);
    if (decision.delayMs) await new Promise((r) => setTimeout(r, decision.delayMs));
    while (gate) await gate;
    waiting.delete(seen);
    res.off('close', goneWhileWaiting);
    const tooLate = p.maxWaitMs !== undefined && Date.now() - seen.at > p.maxWaitMs;
    if (mark.dropped || tooLate || req.socket.destroyed || res.destroyed) {
      if (!mark.counted) p.dropped.push(seen);
      res.destroy();
      return;
    }
    if (decision.status) {
      req.resume();
      p.injected.push({ ...seen, status: decision.status, applied: false });
      injectedAnswer(res, decision.status);
      return;
    }
    p.inFlight++;
    let answered = false;
    const done = () => {
      if (answered) return;
      answered = true;
      p.inFlight--;
    };
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
        upRes.on('end', done);
        upRes.on('close', done);
        if (decision.replaceStatus) {
          upRes.resume();
          p.injected.push({ ...seen, status: decision.replaceStatus, applied: true });
          upRes.on('end', () => injectedAnswer(res, decision.replaceStatus!));
          return;
        }
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        // At once, as the API server sends them: a watch answers its headers before any event, and a
        // client that waits for them (the informers' start) would otherwise wait for its first event.
        res.flushHeaders();
        if (p.recordBodies) record(upRes, (body) => (seen.responseBody = body));
        upRes.pipe(res);
      },
    );
    out.on('error', () => {
      done();
      res.destroy();
    });
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
    dropped: [],
    inFlight: 0,
    decide: () => ({}),
    recordBodies: false,
    hold() {
      let open!: () => void;
      const held = new Promise<void>((r) => (open = r));
      gate = held;
      return () => {
        if (gate === held) gate = undefined;
        open();
      };
    },
    dropFrom(ports) {
      for (const [req, mark] of waiting) if (ports.has(req.clientPort)) mark.dropped = true;
    },
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
