/**
 * The refresh storm's OAuth 2 token endpoint, run in its own process (`node dist/bench/token-endpoint.js`)
 * so that its work is not counted against the controllers'. A hand-written provider: oidc-provider
 * would add its own CPU per call, and the storm needs a fixed latency and exact counts. It does what a
 * strict provider does to a refresh-token grant: answers after a fixed latency, rotates the refresh
 * token on every refresh, and refuses a reused one (`invalid_grant`), so a duplicate refresh shows up
 * as a refusal or as a second refresh of the same connection, never silently.
 *
 * Refresh tokens are `rt.<family>.<generation>`; a family is one connection, generation 0 the token it
 * was created with. Only the current generation is accepted. Prints `{"port":N}` on its first line;
 * `GET /stats` returns the counts and, per family, its refreshes and the time of the first one.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

const LATENCY_MS = Number(process.env.TOKEN_LATENCY_MS ?? 150);
const EXPIRES_IN = Number(process.env.TOKEN_EXPIRES_IN ?? 3600);

interface Family {
  generation: number;
  refreshes: number;
  /** When the first refresh was answered (ms since epoch). */
  firstAt?: number;
  lastAt?: number;
}

const families = new Map<string, Family>();
const counts = { calls: 0, refreshes: 0, reuseRefusals: 0, malformed: 0, unauthenticated: 0 };

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return body;
}

async function token(req: IncomingMessage, res: ServerResponse): Promise<void> {
  counts.calls++;
  const form = new URLSearchParams(await readBody(req));
  await new Promise((r) => setTimeout(r, LATENCY_MS));
  // Client authentication: HTTP Basic or client_id in the body (either is what a provider accepts).
  if (!req.headers.authorization?.startsWith('Basic ') && !form.get('client_id')) {
    counts.unauthenticated++;
    return reply(res, 401, { error: 'invalid_client' });
  }
  const match = /^rt\.([\w-]+)\.(\d+)$/.exec(form.get('refresh_token') ?? '');
  if (form.get('grant_type') !== 'refresh_token' || !match) {
    counts.malformed++;
    return reply(res, 400, { error: 'invalid_request' });
  }
  const [, id, gen] = match as unknown as [string, string, string];
  const family = families.get(id) ?? { generation: 0, refreshes: 0 };
  families.set(id, family);
  if (Number(gen) !== family.generation) {
    counts.reuseRefusals++;
    return reply(res, 400, { error: 'invalid_grant', error_description: 'refresh token already used' });
  }
  family.generation++;
  family.refreshes++;
  counts.refreshes++;
  const now = Date.now();
  family.firstAt ??= now;
  family.lastAt = now;
  reply(res, 200, {
    access_token: `at.${id}.${family.generation}`,
    refresh_token: `rt.${id}.${family.generation}`,
    token_type: 'Bearer',
    expires_in: EXPIRES_IN,
  });
}

const server = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/token') {
    token(req, res).catch(() => reply(res, 500, { error: 'server_error' }));
  } else if (req.method === 'GET' && req.url?.startsWith('/stats')) {
    // ?prefix= narrows the families to one phase's: a run's later phases would otherwise have every
    // earlier phase's serialized on each poll, on this event loop, delaying the token answers of theirs.
    const prefix = new URL(req.url, 'http://endpoint').searchParams.get('prefix') ?? '';
    reply(res, 200, { ...counts, families: Object.fromEntries([...families].filter(([family]) => family.startsWith(prefix))) });
  } else {
    reply(res, 404, { error: 'not_found' });
  }
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
