/**
 * No SSRF: a proxied path can never leave the provider's base URL. Every escape attempt is answered
 * with 400 before any request is made; neither the provider nor a second "victim" server on
 * loopback receives anything.
 */
import { connect } from 'node:net';
import { proxyHeaders, rawRequest, startProxyBed, type ProxyBed } from '../support/proxy-bed.js';
import { semicolonDotSegments, semicolonPathsKept } from '../support/proxy-paths.js';
import { startUpstream, type Upstream } from '../support/servers/upstream.js';

let h: ProxyBed;
let up: Upstream;
let victim: Upstream;

beforeAll(async () => {
  [up, victim] = await Promise.all([startUpstream(), startUpstream()]);
  h = await startProxyBed('ssrf');
  const provider = await h.addProvider('ssrf', {
    displayName: 'SSRF target',
    authMode: 'API_KEY',
    proxy: { baseUrl: `${up.origin}/\${connectionConfig.tenant}/api/v1`, headers: { 'x-api-key': '${apiKey}' } },
  });
  await h.addIntegration('ssrf', provider);
  await h.addConnection(
    { integration: 'ssrf', provider, connectionId: 'u1', authMode: 'API_KEY', connectionConfig: { tenant: 'acme' } },
    { type: 'API_KEY', apiKey: 'do-not-leak' },
  );
  // Connections whose configuration tries to change the host through the template.
  await h.addConnection(
    {
      integration: 'ssrf',
      provider,
      connectionId: 'evil-config',
      authMode: 'API_KEY',
      connectionConfig: { tenant: `x@127.0.0.1:${victim.port}/` },
    },
    { type: 'API_KEY', apiKey: 'do-not-leak' },
  );
  const hostProvider = await h.addProvider('ssrf-host', {
    displayName: 'SSRF host template',
    authMode: 'API_KEY',
    // The one declared host; a value that would change the host or port is refused by this rule.
    connectionConfiguration: [{ name: 'host', enum: ['127.0.0.1'], required: true }],
    proxy: { baseUrl: `http://\${connectionConfig.host}:${up.port}/api`, headers: { 'x-api-key': '${apiKey}' } },
  });
  await h.addIntegration('ssrf-host', hostProvider);
  for (const [id, host] of [
    ['ok', '127.0.0.1'],
    ['evil-port', `127.0.0.1:${victim.port}/`],
    ['evil-at', `x@127.0.0.1:${victim.port}`],
  ] as const) {
    await h.addConnection(
      { integration: 'ssrf-host', provider: hostProvider, connectionId: id, authMode: 'API_KEY', connectionConfig: { host } },
      { type: 'API_KEY', apiKey: 'do-not-leak' },
    );
  }
});

afterAll(async () => {
  await h?.close();
  await Promise.all([up?.close(), victim?.close()]);
});

/** Sends a request line exactly as written (node:http refuses some of these paths itself). */
function rawLine(port: number, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      const lines = [
        `GET ${path} HTTP/1.1`,
        'host: 127.0.0.1',
        'connection: close',
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
        '',
        '',
      ];
      socket.write(lines.join('\r\n'));
    });
    let data = '';
    socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0)));
    socket.on('error', reject);
  });
}

const v = () => `127.0.0.1:${victim.port}`;
const attempts = () => [
  '/proxy/../../x',
  '/proxy/..',
  '/proxy/a/../../../x',
  '/proxy/%2e%2e/%2e%2e/x',
  '/proxy/%2E%2E/x',
  '/proxy/.%2e/x',
  '/proxy/%252e%252e/%252e%252e/x',
  '/proxy/%25252e%25252e/x',
  '/proxy/..%2f..%2fx',
  '/proxy/..%252f..%252fx',
  '/proxy/a\\..\\..\\x',
  '/proxy/a/..%5c..%5cx',
  '/proxy/%5c%5cevil/x',
  `/proxy//${v()}/x`,
  `/proxy/%2f%2f${v()}/x`,
  `/proxy/%252f%252f${v()}/x`,
  `/proxy/http://${v()}/x`,
  `/proxy/http:%2f%2f${v()}/x`,
  `/proxy/https:/${v()}/x`,
  `/proxy/@${v()}/x`,
  `/proxy/user@${v()}/x`,
  '/proxy/x%0d%0aHost:%20evil',
  '/proxy/x%250d%250aHost:%20evil',
  '/proxy/x%00y',
  '/proxy/./x',
  '/proxy/%c0%ae%c0%ae/x',
  '/proxy/%e0%80%ae/x',
  // Read as ".." or "." by Tomcat, Jetty and Spring, which drop ";" path parameters first.
  ...semicolonDotSegments.map((p) => `/proxy${p}`),
];

describe('path escapes', () => {
  it('answers 400 invalid_proxy_path to every escape attempt, and nothing reaches any host', async () => {
    const results: Array<[string, number, string]> = [];
    for (const path of attempts()) {
      const res = await rawRequest(h.server.port, { path, headers: proxyHeaders(h, 'ssrf', 'u1') });
      results.push([path, res.status, (JSON.parse(res.body.toString() || '{}') as { error?: { code?: string } }).error?.code ?? '']);
    }
    expect(results).toEqual(attempts().map((p) => [p, 400, 'invalid_proxy_path']));
    expect(up.requests).toHaveLength(0);
    expect(victim.requests).toHaveLength(0);
  });

  it('refuses absolute-form and raw-control request targets without reaching any host', async () => {
    const headers = proxyHeaders(h, 'ssrf', 'u1');
    for (const target of [`http://${v()}/proxy/x`, '/proxy/a\\b', `/proxy/@${v()}`]) {
      const status = await rawLine(h.server.port, target, headers);
      expect([target, status >= 400 && status < 500]).toEqual([target, true]);
    }
    expect(up.requests).toHaveLength(0);
    expect(victim.requests).toHaveLength(0);
  });

  it('keeps a hostile configuration value in a path position inside the path (percent-encoded)', async () => {
    const res = await rawRequest(h.server.port, { path: '/proxy/x', headers: proxyHeaders(h, 'ssrf', 'evil-config') });
    expect(res.status).toBe(200);
    expect(up.requests.map((r) => r.url)).toEqual([`/x%40127.0.0.1%3A${victim.port}%2F/api/v1/x`]);
    expect(victim.requests).toHaveLength(0);
    up.requests.length = 0;
  });

  it('refuses a configuration value in the host position that would change the host or port', async () => {
    for (const id of ['evil-port', 'evil-at']) {
      const res = await rawRequest(h.server.port, { path: '/proxy/x', headers: proxyHeaders(h, 'ssrf-host', id) });
      // Refused by the Provider's connection configuration rules before the base URL is even built.
      expect([id, res.status, JSON.parse(res.body.toString()).error.code]).toEqual([id, 400, 'invalid_connection_config']);
    }
    expect(victim.requests).toHaveLength(0);
    expect(up.requests).toHaveLength(0);
    const ok = await rawRequest(h.server.port, { path: '/proxy/x', headers: proxyHeaders(h, 'ssrf-host', 'ok') });
    expect(ok.status).toBe(200);
    expect(up.requests.map((r) => r.url)).toEqual(['/api/x']);
    up.requests.length = 0;
  });

  it('still proxies legitimate paths with encoded characters under the base path', async () => {
    const res = await rawRequest(h.server.port, {
      path: '/proxy/users/a%40b.com/files/x%2Fy%20z..txt?q=..%2F',
      headers: proxyHeaders(h, 'ssrf', 'u1'),
    });
    expect(res.status).toBe(200);
    expect(up.requests.map((r) => r.url)).toEqual(['/acme/api/v1/users/a%40b.com/files/x%2Fy%20z..txt?q=..%2F']);
    expect(up.requests[0]!.headers['x-api-key']).toBe('do-not-leak');
    expect(victim.requests).toHaveLength(0);
  });

  it('proxies paths with ";" outside dot segments unchanged (matrix parameters)', async () => {
    up.requests.length = 0;
    for (const path of semicolonPathsKept) {
      const res = await rawRequest(h.server.port, { path: `/proxy${path}`, headers: proxyHeaders(h, 'ssrf', 'u1') });
      expect([path, res.status]).toEqual([path, 200]);
    }
    expect(up.requests.map((r) => r.url)).toEqual(semicolonPathsKept.map((p) => `/acme/api/v1${p}`));
    expect(victim.requests).toHaveLength(0);
    up.requests.length = 0;
  });
});
