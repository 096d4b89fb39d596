/**
 * The peers Latchkey's hot paths are measured against, each run as its own process by
 * bench/hot-paths.ts (`node dist/bench/peer-servers.js <kind>`), printing `{"port": N}` once listening:
 *
 * - `upstream`: the API the proxy forwards to (a fixed JSON answer; `/stream/<bytes>` streams that many bytes);
 * - `express`: a bare express 5 route answering the same JSON as Latchkey's fetch behind a bearer check
 *   (PEER_BODY, PEER_KEY), the floor for `GET /connections/:id`;
 * - `forwarder`: a minimal `node:http` forwarder with a keep-alive agent to the upstream (PEER_UPSTREAM),
 *   adding one header, the floor for `/proxy`;
 * - `webhook`: a bare express 5 route reading the raw body and checking GitHub's `X-Hub-Signature-256`
 *   HMAC with PEER_KEY, the floor for a provider webhook (bench/provider-webhooks.ts).
 */
import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';
import express from 'express';

export const UPSTREAM_BODY = JSON.stringify({
  data: Array.from({ length: 20 }, (_, i) => ({ id: i, name: `record ${i}`, active: i % 2 === 0 })),
});

function upstream(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  const stream = /^\/api\/stream\/(\d+)$/.exec(req.url ?? '');
  if (stream) {
    // A large answer in 64 KiB chunks, written as the socket drains (what a streaming proxy must pass on).
    let left = Number(stream[1]);
    const chunk = Buffer.alloc(64 * 1024, 120);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': left });
    const pump = () => {
      while (left > 0) {
        const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
        left -= part.length;
        if (!res.write(part)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(UPSTREAM_BODY) });
  res.end(UPSTREAM_BODY);
}

function bareExpress(body: string, key: string) {
  const app = express();
  app.disable('x-powered-by');
  const parsed = JSON.parse(body) as unknown;
  app.get('/connections/:connectionId', (req, res) => {
    if (req.headers.authorization !== `Bearer ${key}`) {
      res.status(401).json({ error: { code: 'unknown_secret_key', message: 'The secret key does not belong to any environment' } });
      return;
    }
    res.json(parsed);
  });
  return app;
}

function forwarder(upstreamPort: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  return (req: IncomingMessage, res: ServerResponse) => {
    const headers = { ...req.headers, host: `127.0.0.1:${upstreamPort}`, 'x-api-key': 'peer-key' };
    const path = `/api${(req.url ?? '/').replace(/^\/proxy/, '')}`;
    const out = request({ host: '127.0.0.1', port: upstreamPort, method: req.method, path, headers, agent }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(out);
  };
}

function webhookRoute(key: string) {
  const app = express();
  app.disable('x-powered-by');
  app.post('/webhooks/:namespace/:integration', express.raw({ type: () => true, limit: '512kb' }), (req, res) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const sent = Buffer.from(String(req.headers['x-hub-signature-256'] ?? ''));
    const expected = Buffer.from(`sha256=${createHmac('sha256', key).update(body).digest('hex')}`);
    if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) {
      res.status(401).json({ error: { code: 'invalid_signature', message: 'The webhook signature could not be verified.' } });
      return;
    }
    res.json({ ok: true });
  });
  return app;
}

const kind = process.argv[2];
const handler =
  kind === 'upstream'
    ? upstream
    : kind === 'express'
      ? bareExpress(process.env.PEER_BODY ?? '{}', process.env.PEER_KEY ?? '')
      : kind === 'forwarder'
        ? forwarder(Number(process.env.PEER_UPSTREAM))
        : kind === 'webhook'
          ? webhookRoute(process.env.PEER_KEY ?? '')
          : undefined;
if (!handler) {
  process.stderr.write('usage: peer-servers.js upstream|express|forwarder|webhook\n');
  process.exit(2);
}
const server = createServer(handler);
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
