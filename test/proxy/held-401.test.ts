/**
 * A 401 held while its connection's token is refreshed (issue #38, item 1): the provider answers the
 * first call 401 with a huge body written lazily, and the token endpoint takes ~2 s. While the refresh
 * waits the proxy keeps at most HELD_BODY_MAX_BYTES and stops reading, so the provider writes only what
 * socket buffers take. Refresh works: the 401 is dropped (its connection closed, not read to the end)
 * and the caller gets the retry's 200. Refresh fails: the caller gets the 401 streamed whole.
 */
import { request } from 'node:http';
import { eventually } from '../../dev/cluster.js';
import { HELD_BODY_MAX_BYTES } from '../../src/proxy/upstream-response.js';
import { proxyHeaders, rawRequest, startProxyBed, type ProxyBed } from '../support/proxy-bed.js';
import { endlessAnswer, type EndlessStats } from '../support/servers/endless-answer.js';
import { startUpstream, type Upstream } from '../support/servers/upstream.js';

const CLIENT = { clientId: 'held-client', clientSecret: 'held-client-secret' };
/** How long the token endpoint takes: the 401 is held that long. */
const REFRESH_DELAY_MS = 2000;
/**
 * Most a provider may have written when the proxy stopped reading: the cap plus what the kernel's
 * socket buffers take on loopback (measured 4-8 MB here: the receive buffer grows up to tcp_rmem's
 * maximum), far below the 100 MB written when nothing stops reading.
 */
const STOPPED_EARLY = 16 * 1024 * 1024;
const FAILED_TOTAL = 48 * 1024 * 1024;

let h: ProxyBed;
let up: Upstream;
const huge401 = endlessAnswer({ status: 401, head: '{"error":"invalid_token","filler":"' });
const failed401 = endlessAnswer({ status: 401, head: '{"error":"invalid_token","filler":"', total: FAILED_TOTAL });
/** What the 401's provider had written when the token endpoint answered, by refresh token. */
const writtenAtRefresh = new Map<string, number>();

beforeAll(async () => {
  up = await startUpstream();
  h = await startProxyBed('proxy-held');
  up.onRaw('/api/refreshed', (req, res) => {
    if (req.headers.authorization === 'Bearer fresh-at') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"retried":true}');
    } else huge401.handler(req, res);
  });
  up.onRaw('/api/refused', failed401.handler);
  // Slow on purpose; `rt-ok` gets a new token, anything else is refused.
  up.on('/token', async (_req, res, body) => {
    await new Promise((r) => setTimeout(r, REFRESH_DELAY_MS));
    const refreshToken = new URLSearchParams(body.toString()).get('refresh_token') ?? '';
    const answer = refreshToken === 'rt-ok' ? huge401 : failed401;
    writtenAtRefresh.set(refreshToken, answer.last()?.written ?? -1);
    if (refreshToken === 'rt-ok') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: 'fresh-at', refresh_token: 'rt-next', token_type: 'Bearer', expires_in: 3600 }));
    } else {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end('{"error":"invalid_grant"}');
    }
  });
  const provider = await h.addProvider('oauth2-held', {
    displayName: 'Held 401',
    authMode: 'OAUTH2',
    authorizationUrl: `${up.origin}/authorize`,
    tokenUrl: `${up.origin}/token`,
    proxy: { baseUrl: `${up.origin}/api` },
  });
  await h.addIntegration('held', provider, CLIENT);
});

afterAll(async () => {
  await h?.close();
  await up?.close();
});

async function connection(connectionId: string, refreshToken: string): Promise<void> {
  await h.addConnection(
    { integration: 'held', provider: `oauth2-held-${h.suffix}`, connectionId, authMode: 'OAUTH2' },
    {
      type: 'OAUTH2',
      access_token: 'stale-at',
      refresh_token: refreshToken,
      expires_at: new Date(Date.now() + 3600_000).toISOString(),
      raw: {},
    },
  );
}

/** A proxied GET whose body is counted, not kept. */
function countedRequest(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a 401 held while the token is refreshed', () => {
  it('holds at most the cap, then drops the 401 and answers with the retry', async () => {
    await connection('held-ok', 'rt-ok');
    up.requests.length = 0;
    const res = await rawRequest(h.server.port, { path: '/proxy/refreshed', headers: proxyHeaders(h, 'held', 'held-ok') });

    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('{"retried":true}');
    expect(up.requests.filter((r) => r.url.startsWith('/api/')).map((r) => r.headers.authorization)).toEqual([
      'Bearer stale-at',
      'Bearer fresh-at',
    ]);
    const atRefresh = writtenAtRefresh.get('rt-ok')!;
    expect(atRefresh).toBeGreaterThan(HELD_BODY_MAX_BYTES);
    expect(atRefresh).toBeLessThan(STOPPED_EARLY);
    // The dropped 401 is not read to its end: its connection is closed.
    const stats: EndlessStats = await eventually(() => {
      const last = huge401.last();
      return last?.cutShort || last?.finished ? last : undefined;
    });
    expect(stats.finished).toBe(false);
    expect(stats.written).toBeLessThan(STOPPED_EARLY);
  });

  it('passes the whole 401 through when the refresh fails, having held at most the cap meanwhile', async () => {
    await connection('held-refused', 'rt-refused');
    const res = await countedRequest(h.server.port, '/proxy/refused', proxyHeaders(h, 'held', 'held-refused'));

    expect(writtenAtRefresh.get('rt-refused')).toBeGreaterThan(HELD_BODY_MAX_BYTES);
    expect(writtenAtRefresh.get('rt-refused')).toBeLessThan(STOPPED_EARLY);
    expect(res.status).toBe(401);
    expect(res.bytes).toBe(FAILED_TOTAL);
    expect(failed401.last()!.finished).toBe(true);
    // The stored token is kept: a failed refresh loses nothing.
    expect(h.store.connections.getConnection(h.namespace, 'held', 'held-refused')?.credentials.refresh_token).toBe('rt-refused');
  });
});
