/**
 * SSRF through the proxy's target host (issue 11, attack 2): manifests whose whole host is a
 * connection configuration value let an end user aim the proxy anywhere. The egress guard refuses
 * every private target with 403 egress_refused before connecting, in every spelling, and the
 * "victim" on 127.0.0.1 receives nothing. The legitimate upstream listens on 127.0.0.2 (allowed
 * here, standing in for a public address) on the same port as the victim; names come from an
 * injected resolver, so a DNS-rebinding name can answer the allowed address, then the victim's.
 */
import { EgressGuard, type Resolver } from '../../src/egress/guard.js';
import { proxyHeaders, rawRequest, startProxyBed, type ProxyBed } from '../support/proxy-bed.js';
import { startUpstream, type Upstream } from '../support/servers/upstream.js';

let h: ProxyBed;
let up: Upstream;
let victim: Upstream;
const resolverCalls: string[] = [];
const answers: Record<string, string[]> = {
  'loopback.test': ['127.0.0.1'],
  'metadata.test': ['169.254.169.254'],
  'upstream.test': ['127.0.0.2'],
  // Public (allowed) for the check, loopback for any second lookup.
  'rebind.test': ['127.0.0.2', '127.0.0.1'],
};
const resolver: Resolver = async (host) => {
  resolverCalls.push(host);
  const list = answers[host];
  if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  const address = list.length > 1 ? list.shift()! : list[0]!;
  return [{ address, family: 4 }];
};

const REFUSED_HOSTS = {
  loopback: '127.0.0.1',
  decimal: '2130706433',
  octal: '0177.0.0.1',
  hex: '0x7f.1',
  metadata: '169.254.169.254',
  'metadata-decimal': '2852039166',
  private: '10.0.0.1',
  cgnat: '100.64.0.1',
  'name-loopback': 'loopback.test',
  'name-metadata': 'metadata.test',
};

beforeAll(async () => {
  up = await startUpstream({ host: '127.0.0.2' });
  victim = await startUpstream({ host: '127.0.0.1', port: up.port });
  h = await startProxyBed('egress', { egress: new EgressGuard({ allow: ['127.0.0.2/32'], resolve: resolver }) });
  // Every host the cases use is one the Provider declares (an enum), so the configuration rules let
  // them through and what refuses them is the egress guard alone.
  const hosts = Object.values({ ...REFUSED_HOSTS, ok: '127.0.0.2', 'ok-name': 'upstream.test', rebind: 'rebind.test' });
  const hostProvider = await h.addProvider('egress-host', {
    displayName: 'Host from connection configuration',
    authMode: 'API_KEY',
    connectionConfiguration: [{ name: 'host', enum: hosts, required: true }],
    proxy: { baseUrl: `http://\${connectionConfig.host}:${up.port}/api`, headers: { 'x-api-key': '${apiKey}' } },
  });
  await h.addIntegration('egress-host', hostProvider);
  for (const [id, host] of Object.entries({ ...REFUSED_HOSTS, ok: '127.0.0.2', 'ok-name': 'upstream.test', rebind: 'rebind.test' })) {
    await h.addConnection(
      { integration: 'egress-host', provider: hostProvider, connectionId: id, authMode: 'API_KEY', connectionConfig: { host } },
      { type: 'API_KEY', apiKey: 'do-not-leak' },
    );
  }
  // IPv6 spellings cannot come through a percent-encoded template value; a base URL can hold them.
  for (const [name, base] of [
    ['egress-mapped', `http://[::ffff:127.0.0.1]:${up.port}/api`],
    ['egress-nat64', `http://[64:ff9b::a9fe:a9fe]:${up.port}/api`],
    ['egress-v6-loopback', `http://[::1]:${up.port}/api`],
  ] as const) {
    const provider = await h.addProvider(name, {
      displayName: name,
      authMode: 'API_KEY',
      proxy: { baseUrl: base, headers: { 'x-api-key': '${apiKey}' } },
    });
    await h.addIntegration(name, provider);
    await h.addConnection(
      { integration: name, provider, connectionId: 'c', authMode: 'API_KEY' },
      { type: 'API_KEY', apiKey: 'do-not-leak' },
    );
  }
});

afterAll(async () => {
  await h?.close();
  await Promise.all([up?.close(), victim?.close()]);
});

const call = (integration: string, id: string, extra: Record<string, string> = {}) =>
  rawRequest(h.server.port, { path: '/proxy/x', headers: proxyHeaders(h, integration, id, extra) });

it('proxies to an allowed address and an allowed name (the control)', async () => {
  for (const id of ['ok', 'ok-name']) {
    const res = await call('egress-host', id);
    expect([id, res.status]).toEqual([id, 200]);
  }
  expect(up.requests.map((r) => r.headers['x-api-key'])).toEqual(['do-not-leak', 'do-not-leak']);
  up.requests.length = 0;
});

it('answers 403 egress_refused for every private target, without retrying, and the victim receives nothing', async () => {
  const results: Array<[string, number, string]> = [];
  for (const id of Object.keys(REFUSED_HOSTS)) {
    const res = await call('egress-host', id, { retries: '3' });
    results.push([id, res.status, (JSON.parse(res.body.toString()) as { error: { code: string } }).error.code]);
  }
  for (const integration of ['egress-mapped', 'egress-nat64', 'egress-v6-loopback']) {
    const res = await call(integration, 'c');
    results.push([integration, res.status, (JSON.parse(res.body.toString()) as { error: { code: string } }).error.code]);
  }
  expect(results).toEqual(
    [...Object.keys(REFUSED_HOSTS), 'egress-mapped', 'egress-nat64', 'egress-v6-loopback'].map((id) => [id, 403, 'egress_refused']),
  );
  expect(victim.requests).toHaveLength(0);
  expect(up.requests).toHaveLength(0);
});

it('says what was refused, and never the credential', async () => {
  const res = await call('egress-host', 'name-metadata');
  const body = JSON.parse(res.body.toString()) as { error: { message: string } };
  expect(body.error.message).toMatch(/metadata\.test \(169\.254\.169\.254\) is a metadata address/);
  expect(res.body.toString()).not.toContain('do-not-leak');
});

it('connects to the address it checked: a rebinding name reaches the allowed address, never the victim', async () => {
  resolverCalls.length = 0;
  const res = await call('egress-host', 'rebind');
  expect(res.status).toBe(200);
  expect(resolverCalls).toEqual(['rebind.test']);
  expect(up.requests).toHaveLength(1);
  expect(victim.requests).toHaveLength(0);
  up.requests.length = 0;
});
