/**
 * A fetch of a connection in memory, with a token not due, makes no Kubernetes API request and is
 * answered before the request listener returns (no promise on its path). Each server reaches the
 * real API server through its own counting proxy (plain HTTP in front, HTTPS behind), with the
 * connection cache kept whole (the default) and bounded (as the chart runs the server). The fetch
 * time goes to a LastFetchedRecorder whose timer is not started: its batched status write, off the
 * request path by design (test/connections/last-fetched.test.ts), cannot land among the requests counted.
 */
import { createServer, type Server } from 'node:http';
import { createContext } from '../../src/app/context.js';
import { connectionCacheOf } from '../../src/app/run.js';
import { LastFetchedRecorder } from '../../src/connections/last-fetched.js';
import type { AppContext } from '../../src/context/app-context.js';
import { createRequestListener } from '../../src/http/app.js';
import { loadKubeConfig } from '../../src/k8s/client.js';
import { createTestNamespace, eventually, testKubeConfig, testLogger } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { startHttpFaultProxy, type HttpFaultProxy, type ProxiedRequest } from '../support/faults/http-fault-proxy.js';
import { kubeconfigFile } from '../support/faults/latchkey-process.js';
import { callJson } from '../support/replica.js';
import { testConfig } from '../support/config.js';

const kc = testKubeConfig();
let ns: { name: string; delete(): Promise<void> };
let env: TestEnvironment;
const KEY_PROVIDER = `cached-fetch-key-${process.pid}`;
const OAUTH_PROVIDER = `cached-fetch-oauth-${process.pid}`;

interface CountedServer {
  ctx: AppContext;
  proxy: HttpFaultProxy;
  lastFetched: LastFetchedRecorder;
  url: string;
  /** Whether each answer had ended when the request listener returned, in request order. */
  endedInListener: boolean[];
  stop(): Promise<void>;
}

async function startCounted(connectionCacheEntries: number): Promise<CountedServer> {
  const proxy = await startHttpFaultProxy(kc.getCurrentCluster()!.server);
  const config = testConfig([ns.name], { connectionCacheEntries });
  const ctx = createContext({
    config,
    logger: testLogger(),
    kc: loadKubeConfig(kubeconfigFile(kc, proxy.url)),
    ...connectionCacheOf(['server'], connectionCacheEntries),
  });
  await ctx.caches.start();
  const lastFetched = new LastFetchedRecorder({ ...ctx, intervalMs: 3_600_000 });
  const listener = createRequestListener(ctx, { lastFetched });
  const endedInListener: boolean[] = [];
  const server: Server = createServer((req, res) => {
    listener(req, res);
    if (req.url?.startsWith('/connections/')) endedInListener.push(res.writableEnded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    ctx,
    proxy,
    lastFetched,
    url,
    endedInListener,
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await ctx.caches.stop();
      await proxy.close();
    },
  };
}

/** What reached the API server after index `from`, watches (the caches' long-lived streams) left out. */
const requestsSince = (proxy: HttpFaultProxy, from: number): ProxiedRequest[] =>
  proxy.seen.slice(from).filter((r) => !r.path.includes('watch='));

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'cached-fetch');
  env = await createEnvironment(kc, ns.name);
  await applyProvider(kc, KEY_PROVIDER, {
    displayName: 'Keys',
    authMode: 'API_KEY',
    proxy: { baseUrl: 'https://api.example.com', headers: { 'x-api-key': '${apiKey}' } },
  });
  // Its token endpoint is never called: the token imported below is not due.
  await applyProvider(kc, OAUTH_PROVIDER, {
    displayName: 'OAuth',
    authMode: 'OAUTH2',
    authorizationUrl: 'https://auth.example.test/authorize',
    tokenUrl: 'https://auth.example.test/token',
  });
  await createIntegration(kc, ns.name, 'keys', { provider: KEY_PROVIDER });
  await createIntegration(
    kc,
    ns.name,
    'oauth',
    { provider: OAUTH_PROVIDER },
    { clientId: 'cached-fetch', clientSecret: 'cached-fetch-secret' },
  );
});

afterAll(async () => {
  await deleteProvider(kc, KEY_PROVIDER);
  await deleteProvider(kc, OAUTH_PROVIDER);
  await ns?.delete();
});

describe.each([
  ['kept whole (the default)', 0],
  ['bounded', 10],
])('a server whose connection cache is %s', (_name, entries) => {
  let s: CountedServer;
  beforeAll(async () => {
    s = await startCounted(entries);
    expect(s.ctx.caches.bounded).toBe(entries > 0);
    await eventually(() => s.ctx.catalog.getIntegration(ns.name, 'keys') && s.ctx.catalog.getIntegration(ns.name, 'oauth'));
    await eventually(async () => (await callJson(s.url, 'GET', '/providers', { key: env.secretKey })).status === 200);
  });
  afterAll(() => s?.stop());

  it('fetches connections in memory without an API request, answering before the listener returns', async () => {
    const call = (method: string, path: string, body?: unknown) => callJson(s.url, method, path, { key: env.secretKey, body });
    const suffix = `${entries}`;
    const imports = [
      {
        provider_config_key: 'keys',
        connection_id: `key-${suffix}`,
        credentials: { type: 'API_KEY', apiKey: `sk-cached-${suffix}` },
      },
      {
        provider_config_key: 'oauth',
        connection_id: `oauth-${suffix}`,
        credentials: {
          type: 'OAUTH2',
          access_token: `at-cached-${suffix}`,
          refresh_token: `rt-cached-${suffix}`,
          expires_at: new Date(Date.now() + 3_600_000).toISOString(),
        },
      },
    ];
    for (const body of imports) expect((await call('POST', '/connections', body)).status).toBe(201);
    const paths = imports.map((i) => `/connections/${i.connection_id}?provider_config_key=${i.provider_config_key}`);
    // Once the imports' own watch events are in (a bounded cache keeps what it wrote, the whole cache what it watched).
    for (const [i, path] of paths.entries()) {
      await eventually(() => s.ctx.connections.getConnection(ns.name, imports[i]!.provider_config_key, imports[i]!.connection_id));
      expect((await call('GET', path)).status).toBe(200);
    }
    await new Promise((r) => setTimeout(r, 500));

    const from = s.proxy.seen.length;
    const answeredFrom = s.endedInListener.length;
    const answers = [];
    for (let round = 0; round < 10; round++) answers.push(...(await Promise.all(paths.map((p) => call('GET', p)))));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(answers.filter((a) => a.body.credentials.apiKey === `sk-cached-${suffix}`)).toHaveLength(10);
    expect(answers.filter((a) => a.body.credentials.access_token === `at-cached-${suffix}`)).toHaveLength(10);
    expect(answers.every((a) => typeof a.body.last_fetched_at === 'string')).toBe(true);

    expect(requestsSince(s.proxy, from)).toEqual([]);
    expect(s.endedInListener.slice(answeredFrom)).toEqual(answers.map(() => true));
    // The fetch times are held in memory, for the batched write.
    expect(s.lastFetched.pendingCount).toBe(2);
  });

  it('counts what does reach the API server: a bounded cache asks it about a connection it does not keep', async () => {
    const from = s.proxy.seen.length;
    const answer = await callJson(s.url, 'GET', '/connections/never-imported?provider_config_key=keys', { key: env.secretKey });
    expect(answer.status).toBe(404);
    // The whole cache knows every connection there is; a bounded one reads the Connection and its Secret.
    expect(requestsSince(s.proxy, from).some((r) => r.method === 'GET')).toBe(entries > 0);
  });
});
