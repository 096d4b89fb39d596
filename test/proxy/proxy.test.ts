/**
 * The credential-injecting proxy against a real upstream HTTP server on loopback: credentials per
 * auth mode (the OAuth 1.0a signature verified by Debian's python3-oauthlib), pass-through of
 * method, path, query, body and headers, cursor pagination, retries, gzip, large streamed bodies.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { REPO_ROOT } from '../../dev/control-plane.js';
import { proxyHeaders, rawRequest, startProxyBed, type ProxyBed } from '../support/proxy-bed.js';
import { echo, startUpstream, type Upstream } from '../support/servers/upstream.js';

let h: ProxyBed;
let up: Upstream;
let victim: Upstream;

const CONSUMER = { clientId: 'consumer-key-1', clientSecret: 'consumer-secret-1' };

beforeAll(async () => {
  [up, victim] = await Promise.all([startUpstream(), startUpstream()]);
  h = await startProxyBed('proxy');
  const base = `${up.origin}/api/v1`;
  const providers = await Promise.all([
    h.addProvider('bearer', {
      displayName: 'Bearer',
      authMode: 'OAUTH2',
      authorizationUrl: `${up.origin}/auth`,
      tokenUrl: `${up.origin}/token`,
      proxy: {
        baseUrl: base,
        headers: { 'x-tenant': '${connectionConfig.tenant}' },
        paginate: {
          type: 'cursor',
          cursorPathInResponse: 'meta.next',
          cursorNameInRequest: 'after',
          limitNameInRequest: 'page_size',
          responsePath: 'records',
        },
      },
    }),
    h.addProvider('basic', { displayName: 'Basic', authMode: 'BASIC', proxy: { baseUrl: base } }),
    h.addProvider('keyheader', {
      displayName: 'Key header',
      authMode: 'API_KEY',
      proxy: { baseUrl: base, headers: { 'x-api-key': '${apiKey}' } },
    }),
    h.addProvider('keyquery', {
      displayName: 'Key query',
      authMode: 'API_KEY',
      proxy: { baseUrl: `${up.origin}/\${connectionConfig.region}/api`, query: { key: '${apiKey}' } },
    }),
    h.addProvider('oauth1', {
      displayName: 'OAuth1',
      authMode: 'OAUTH1',
      requestTokenUrl: `${up.origin}/rt`,
      authorizationUrl: `${up.origin}/auth`,
      tokenUrl: `${up.origin}/at`,
      proxy: { baseUrl: base },
    }),
    h.addProvider('gzip-on', {
      displayName: 'Gzip on',
      authMode: 'API_KEY',
      proxy: { baseUrl: base, decompress: true, headers: { authorization: 'Token ${apiKey}' } },
    }),
    h.addProvider('gzip-off', {
      displayName: 'Gzip off',
      authMode: 'API_KEY',
      proxy: { baseUrl: base, decompress: false, headers: { authorization: 'Token ${apiKey}' } },
    }),
  ]);
  const [bearer, basic, keyheader, keyquery, oauth1, gzipOn, gzipOff] = providers as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  await Promise.all([
    h.addIntegration('bearer', bearer),
    h.addIntegration('basic', basic),
    h.addIntegration('keyheader', keyheader),
    h.addIntegration('keyquery', keyquery),
    h.addIntegration('oauth1', oauth1, CONSUMER),
    h.addIntegration('gzip-on', gzipOn),
    h.addIntegration('gzip-off', gzipOff),
  ]);
  const far = new Date(Date.now() + 3600_000).toISOString();
  await Promise.all([
    h.addConnection(
      { integration: 'bearer', provider: bearer, connectionId: 'u1', authMode: 'OAUTH2', connectionConfig: { tenant: 'acme' } },
      { type: 'OAUTH2', access_token: 'at-bearer-1', refresh_token: 'rt-1', expires_at: far, raw: {} },
    ),
    h.addConnection(
      { integration: 'basic', provider: basic, connectionId: 'u1', authMode: 'BASIC' },
      { type: 'BASIC', username: 'alice', password: 'p:ss wörd' },
    ),
    h.addConnection(
      { integration: 'keyheader', provider: keyheader, connectionId: 'u1', authMode: 'API_KEY' },
      { type: 'API_KEY', apiKey: 'key-in-header' },
    ),
    h.addConnection(
      { integration: 'keyquery', provider: keyquery, connectionId: 'u1', authMode: 'API_KEY', connectionConfig: { region: 'eu' } },
      { type: 'API_KEY', apiKey: 'key in query&x=1' },
    ),
    h.addConnection(
      { integration: 'oauth1', provider: oauth1, connectionId: 'u1', authMode: 'OAUTH1' },
      { type: 'OAUTH1', oauth_token: 'tok-1', oauth_token_secret: 'tok-secret-1', raw: {} },
    ),
    h.addConnection(
      { integration: 'gzip-on', provider: gzipOn, connectionId: 'u1', authMode: 'API_KEY' },
      { type: 'API_KEY', apiKey: 'k' },
    ),
    h.addConnection(
      { integration: 'gzip-off', provider: gzipOff, connectionId: 'u1', authMode: 'API_KEY' },
      { type: 'API_KEY', apiKey: 'k' },
    ),
  ]);
});

afterAll(async () => {
  await h?.close();
  await Promise.all([up?.close(), victim?.close()]);
});

beforeEach(() => {
  up.requests.length = 0;
});

const call = (
  integration: string,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: Buffer | string } = {},
) => rawRequest(h.server.port, { method: opts.method, path, headers: proxyHeaders(h, integration, 'u1', opts.headers), body: opts.body });

describe('credentials per auth mode', () => {
  it('OAUTH2: sends the bearer token and passes method, path, query, body and headers, but not ours', async () => {
    const res = await call('bearer', '/proxy/items/a%2Fb?x=1&y=two%20words', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-custom': 'kept',
        'latchkey-debug': 'drop',
        retries: '0',
        connection: 'keep-alive, x-hop',
        'x-hop': 'drop',
      },
      body: '{"hello":"world"}',
    });
    expect(res.status).toBe(200);
    expect(res.headers['x-upstream']).toBe('yes');
    expect(up.requests).toHaveLength(1);
    const seen = up.requests[0]!;
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/api/v1/items/a%2Fb?x=1&y=two%20words');
    expect(seen.body.toString()).toBe('{"hello":"world"}');
    expect(seen.headers.authorization).toBe('Bearer at-bearer-1');
    expect(seen.headers['x-tenant']).toBe('acme');
    expect(seen.headers['x-custom']).toBe('kept');
    expect(seen.headers['content-type']).toBe('application/json');
    for (const dropped of ['connection-id', 'provider-config-key', 'retries', 'latchkey-debug', 'x-hop'])
      expect([dropped, seen.headers[dropped]]).toEqual([dropped, undefined]);
    expect(JSON.stringify(seen.headers)).not.toContain(h.env.secretKey);
  });

  it("OAUTH2 with the provider's own scheme in proxy.headers (Zoho's Zoho-oauthtoken): sends that, not Bearer", async () => {
    const zoho = await h.addProvider('own-scheme', {
      displayName: 'Own scheme',
      authMode: 'OAUTH2',
      authorizationUrl: `${up.origin}/auth`,
      tokenUrl: `${up.origin}/token`,
      proxy: { baseUrl: `${up.origin}/api/v1`, headers: { authorization: 'Zoho-oauthtoken ${accessToken}' } },
    });
    await h.addIntegration('own-scheme', zoho);
    await h.addConnection(
      { integration: 'own-scheme', provider: zoho, connectionId: 'u1', authMode: 'OAUTH2' },
      { type: 'OAUTH2', access_token: 'at-zoho-1', expires_at: new Date(Date.now() + 3600_000).toISOString(), raw: {} },
    );
    expect((await call('own-scheme', '/proxy/crm/v8/Leads')).status).toBe(200);
    expect(up.requests.map((r) => [r.url, r.headers.authorization])).toEqual([['/api/v1/crm/v8/Leads', 'Zoho-oauthtoken at-zoho-1']]);
  });

  it('BASIC: sends HTTP Basic with the stored username and password', async () => {
    expect((await call('basic', '/proxy/me')).status).toBe(200);
    const auth = up.requests[0]!.headers.authorization!;
    expect(auth.startsWith('Basic ')).toBe(true);
    expect(Buffer.from(auth.slice(6), 'base64').toString('utf8')).toBe('alice:p:ss wörd');
  });

  it("API_KEY: puts the key in the header the provider names, and drops the caller's Authorization", async () => {
    expect((await call('keyheader', '/proxy/me')).status).toBe(200);
    expect(up.requests[0]!.headers['x-api-key']).toBe('key-in-header');
    expect(up.requests[0]!.headers.authorization).toBeUndefined();
  });

  it("API_KEY: puts the key in the query parameter the provider names, replacing a caller's value, under a templated base URL", async () => {
    expect((await call('keyquery', '/proxy/things?key=forged&q=1')).status).toBe(200);
    const url = new URL(up.requests[0]!.url, up.origin);
    expect(url.pathname).toBe('/eu/api/things');
    expect(url.searchParams.getAll('key')).toEqual(['key in query&x=1']);
    expect(url.searchParams.get('q')).toBe('1');
  });

  it('OAUTH1: signs with HMAC-SHA1, and an independent implementation (python3-oauthlib) accepts the signature', async () => {
    const res = await call('oauth1', '/proxy/cards?fields=name,id&limit=10', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=My%20card&desc=a+b',
    });
    expect(res.status).toBe(200);
    const seen = up.requests[0]!;
    expect(seen.headers.authorization).toMatch(/^OAuth /);
    expect(seen.headers.authorization).toContain('oauth_token="tok-1"');
    expect(seen.headers.authorization).toContain(`oauth_consumer_key="${CONSUMER.clientId}"`);
    expect(seen.headers.authorization).not.toContain('tok-secret-1');
    const verify = (consumerSecret: string) => {
      const input = JSON.stringify({
        method: seen.method,
        uri: `${up.origin}${seen.url}`,
        headers: { Authorization: seen.headers.authorization, 'Content-Type': seen.headers['content-type'] },
        body: seen.body.toString('utf8'),
        consumer_secret: consumerSecret,
        token_secret: 'tok-secret-1',
      });
      const out = spawnSync('/usr/bin/python3', [join(REPO_ROOT, 'test/support/servers/verify_oauth1.py')], {
        input,
        encoding: 'utf8',
        timeout: 20_000,
      });
      if (out.status !== 0) throw new Error(out.stderr);
      return out.stdout.trim();
    };
    expect(verify(CONSUMER.clientSecret)).toBe('valid');
    expect(verify('wrong-secret')).toBe('invalid');
  });
});

describe('pass-through', () => {
  it("pages by cursor with the provider's own parameter names", async () => {
    const records = Array.from({ length: 7 }, (_, i) => ({ id: i + 1 }));
    up.on('/api/v1/records', (req, res) => {
      const q = new URL(req.url!, up.origin).searchParams;
      const size = Number(q.get('page_size') ?? 3);
      const start = q.get('after') ? Number(q.get('after')) : 0;
      const page = records.slice(start, start + size);
      const next = start + size < records.length ? String(start + size) : undefined;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ records: page, meta: next ? { next } : {} }));
    });
    const paginate = h.store.catalog.getProvider(`bearer-${h.suffix}`)!.spec.proxy!.paginate!;
    const seen: number[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const q = new URLSearchParams({
        [paginate.limitNameInRequest!]: '3',
        ...(cursor ? { [paginate.cursorNameInRequest!]: cursor } : {}),
      });
      const res = await call('bearer', `/proxy/records?${q}`);
      expect(res.status).toBe(200);
      const json = JSON.parse(res.body.toString()) as Record<string, unknown>;
      const at = (path: string) => path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], json);
      seen.push(...(at(paginate.responsePath!) as Array<{ id: number }>).map((r) => r.id));
      cursor = at(paginate.cursorPathInResponse!) as string | undefined;
      if (!cursor) break;
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(up.requests.map((r) => r.url)).toEqual([
      '/api/v1/records?page_size=3',
      '/api/v1/records?page_size=3&after=3',
      '/api/v1/records?page_size=3&after=6',
    ]);
  });

  it('returns a redirect as it is and does not follow it', async () => {
    up.on('/api/v1/moved', (_req, res) => {
      res.writeHead(302, { location: `${victim.origin}/steal` });
      res.end();
    });
    const res = await call('bearer', '/proxy/moved');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`${victim.origin}/steal`);
    expect(victim.requests).toHaveLength(0);
  });

  it("passes the provider's status, headers and error body back", async () => {
    up.on('/api/v1/missing', (_req, res) => {
      res.writeHead(404, { 'content-type': 'application/problem+json', 'x-request-id': 'abc' });
      res.end('{"detail":"nope"}');
    });
    const res = await call('bearer', '/proxy/missing');
    expect(res.status).toBe(404);
    expect(res.headers['x-request-id']).toBe('abc');
    expect(res.body.toString()).toBe('{"detail":"nope"}');
  });

  it("answers 502 when the provider's status line cannot be passed on, and the server stays up", async () => {
    // A control character in the reason phrase: undici's parser lets it through, node's writeHead refuses it.
    up.onRaw('/api/v1/odd-status', (req, res) => {
      req.resume();
      res.socket!.end('HTTP/1.1 200 O\x01K\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok');
    });
    const res = await call('bearer', '/proxy/odd-status');
    expect(res.status).toBe(502);
    expect(JSON.parse(res.body.toString())).toMatchObject({ error: { code: 'provider_invalid_response' } });
    up.on('/api/v1/after', (_req, r) => void r.end('fine'));
    const after = await call('bearer', '/proxy/after');
    expect(after.status).toBe(200);
  });
});

describe('retries', () => {
  it('retries a 429 after the Retry-After the provider asked for, then succeeds', async () => {
    let n = 0;
    up.on('/api/v1/limited', (req, res, body) => {
      if (n++ === 0) {
        res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/plain' });
        res.end('slow down');
        return;
      }
      void echo(req, res, body);
    });
    const res = await call('bearer', '/proxy/limited', { method: 'PUT', body: 'same body', headers: { retries: '2' } });
    expect(res.status).toBe(200);
    expect(up.requests.map((r) => r.body.toString())).toEqual(['same body', 'same body']);
  });

  it('returns the 429 itself when the caller asked for no retries', async () => {
    up.on('/api/v1/limited-once', (_req, res) => {
      res.writeHead(429, { 'retry-after': '1' });
      res.end('slow down');
    });
    const res = await call('bearer', '/proxy/limited-once');
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('1');
    expect(up.requests).toHaveLength(1);
  });

  it('retries 5xx with backoff and network errors, replaying the body', async () => {
    let n = 0;
    up.on('/api/v1/flaky', (req, res, body) => {
      n++;
      if (n === 1) {
        res.destroy(); // network error
        return;
      }
      if (n <= 3) {
        res.writeHead(n === 2 ? 503 : 500);
        res.end();
        return;
      }
      void echo(req, res, body);
    });
    const res = await call('bearer', '/proxy/flaky', { method: 'POST', body: 'payload', headers: { retries: '5' } });
    expect(res.status).toBe(200);
    expect(up.requests.map((r) => r.body.toString())).toEqual(['payload', 'payload', 'payload', 'payload']);
  });

  it('gives up after the retries asked for and returns the last answer', async () => {
    up.on('/api/v1/down', (_req, res) => {
      res.writeHead(502);
      res.end('bad gateway');
    });
    const res = await call('bearer', '/proxy/down', { headers: { retries: '2' } });
    expect(res.status).toBe(502);
    expect(res.body.toString()).toBe('bad gateway');
    expect(up.requests).toHaveLength(3);
  });

  it('refuses an invalid Retries header', async () => {
    const res = await call('bearer', '/proxy/x', { headers: { retries: '1000' } });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body.toString()).error.code).toBe('invalid_retries');
    expect(up.requests).toHaveLength(0);
  });
});

/** How many bytes a stream carried and their SHA-256 (hex); `onFirst` runs when the first chunk arrives. */
function digestOf(stream: Readable, onFirst: () => void): Promise<{ bytes: number; digest: string }> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    let bytes = 0;
    stream.on('data', (c: Buffer) => {
      if (bytes === 0) onFirst();
      bytes += c.length;
      hash.update(c);
    });
    stream.on('end', () => resolve({ bytes, digest: hash.digest('hex') }));
    stream.on('error', reject);
  });
}

describe('compression and streaming', () => {
  const json = JSON.stringify({ hello: 'world', n: Array.from({ length: 200 }, (_, i) => i) });
  const gz = gzipSync(json);
  beforeAll(() => {
    up.on('/api/v1/gz', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(gz.length) });
      res.end(gz);
    });
  });

  it('decompresses gzip when the provider record says decompress', async () => {
    const res = await call('gzip-on', '/proxy/gz', { headers: { 'accept-encoding': 'gzip' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.body.toString()).toBe(json);
  });

  it('passes the gzip bytes through untouched otherwise', async () => {
    const res = await call('gzip-off', '/proxy/gz', { headers: { 'accept-encoding': 'gzip' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['content-length']).toBe(String(gz.length));
    expect(res.body.equals(gz)).toBe(true);
  });

  it('streams a 50 MB response: the first bytes reach the caller before the provider has written the rest', async () => {
    const MB = 1024 * 1024;
    const chunk = Buffer.alloc(MB, 'abcdefghijklmnopqrstuvwxyz');
    let releaseRest!: () => void;
    const callerHasFirstBytes = new Promise<void>((r) => (releaseRest = r));
    up.onRaw('/api/v1/big', (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(chunk);
      // The rest is written only once the caller has seen bytes: a proxy that buffered the whole
      // body would never deliver any, and this test would time out instead of passing.
      void callerHasFirstBytes.then(async () => {
        for (let i = 1; i < 50; i++) if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
        res.end();
      });
    });
    const result = await new Promise<{ bytes: number; digest: string }>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: h.server.port, path: '/proxy/big', headers: proxyHeaders(h, 'bearer', 'u1') },
        (res) => void digestOf(res, releaseRest).then(resolve, reject),
      );
      req.on('error', reject);
      req.end();
    });
    const expected = createHash('sha256');
    for (let i = 0; i < 50; i++) expected.update(chunk);
    expect(result.bytes).toBe(50 * MB);
    expect(result.digest).toBe(expected.digest('hex'));
  });

  // A body over the replay limit (1 MiB) is streamed once, never held: with a declared length at
  // once, without one (chunked) after the first MiB. Retries: 3 would ask to hold it if it could.
  it.each([
    ['a declared Content-Length', true],
    ['chunked transfer coding', false],
  ])('streams a 50 MB upload with %s: the provider sees the first bytes before the caller has sent the rest', async (_how, declared) => {
    const MB = 1024 * 1024;
    const chunk = Buffer.alloc(MB, 'xyz');
    let providerHasFirstBytes!: () => void;
    const firstBytesArrived = new Promise<void>((r) => (providerHasFirstBytes = r));
    up.onRaw('/api/v1/upload', (req, res) => {
      void digestOf(req, providerHasFirstBytes).then(({ bytes, digest }) => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ bytes, digest }));
      });
    });
    const result = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const headers: Record<string, string> = proxyHeaders(h, 'bearer', 'u1', { 'content-type': 'application/octet-stream', retries: '3' });
      if (declared) headers['content-length'] = String(50 * MB);
      const req = request({ host: '127.0.0.1', port: h.server.port, method: 'PUT', path: '/proxy/upload', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      });
      req.on('error', reject);
      // Two MiB first (past the replay limit), the other 48 only once the provider has bytes: a proxy that
      // waited for the whole body would never send any, and this test would time out instead of passing.
      req.write(chunk);
      req.write(chunk);
      void firstBytesArrived.then(async () => {
        for (let i = 2; i < 50; i++) if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
        req.end();
      });
    });
    expect(result.status).toBe(201);
    const expected = createHash('sha256');
    for (let i = 0; i < 50; i++) expected.update(chunk);
    expect(JSON.parse(result.body)).toEqual({ bytes: 50 * MB, digest: expected.digest('hex') });
  });
});

describe('connections to the provider', () => {
  it('sends one request after another over one kept-alive connection, whole answers and piped ones alike', async () => {
    up.on('/api/v1/piped', (_req, res) => {
      // Headers first, the body a moment later: the answer is still arriving when the proxy starts passing it on.
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.flushHeaders();
      setTimeout(() => res.end('late body'), 20);
    });
    const paths = ['/proxy/again-1', '/proxy/piped', '/proxy/again-2', '/proxy/again-3'];
    for (const path of paths) {
      const answer = await call('keyheader', path);
      expect(answer.status).toBe(200);
      if (path === '/proxy/piped') expect(answer.body.toString()).toBe('late body');
      else expect(JSON.parse(answer.body.toString()).url).toBe(`/api/v1${path.slice('/proxy'.length)}`);
    }
    expect(up.requests).toHaveLength(paths.length);
    expect(new Set(up.requests.map((r) => r.remotePort)).size).toBe(1);
  });
});

describe('errors and metrics', () => {
  it('answers 404 for an unknown connection and 400 without the connection headers, before calling anyone', async () => {
    const unknown = await rawRequest(h.server.port, { path: '/proxy/x', headers: proxyHeaders(h, 'bearer', 'nobody') });
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body.toString()).error.code).toBe('unknown_connection');
    const missing = await rawRequest(h.server.port, { path: '/proxy/x', headers: { authorization: `Bearer ${h.env.secretKey}` } });
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.body.toString()).error.code).toBe('invalid_headers');
    const noKey = await rawRequest(h.server.port, {
      path: '/proxy/x',
      headers: { 'connection-id': 'u1', 'provider-config-key': 'bearer' },
    });
    expect(noKey.status).toBe(401);
    expect(JSON.parse(noKey.body.toString()).error.code).toBe('missing_authorization');
    // Answered before express sees the request, as the app's error handler answers.
    for (const answer of [unknown, missing, noKey]) expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(up.requests).toHaveLength(0);
  });

  it('counts requests by provider and status, without credentials in labels', async () => {
    await call('bearer', '/proxy/count-me');
    const text = await (await fetch(`${h.server.url}/metrics`)).text();
    expect(text).toMatch(new RegExp(`latchkey_proxy_requests_total\\{provider="bearer-${h.suffix}",status="200"\\} \\d+`));
    expect(text).toContain('latchkey_proxy_request_duration_seconds_bucket');
    // The HTTP request metric too, under the route pattern, never the path.
    expect(text).toMatch(/latchkey_http_request_duration_seconds_count\{route="\/proxy",method="GET",status="200"\} \d+/);
    expect(text).not.toContain('count-me');
    expect(text).not.toContain('at-bearer-1');
    expect(text).not.toContain('key-in-header');
  });
});
