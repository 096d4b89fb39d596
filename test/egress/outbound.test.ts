/**
 * The egress guard on the calls that are not the proxy (issue 11, attack 2), against the real
 * control plane: a token URL templated to a private host is refused before anything is sent (the
 * app's client secret and the refresh token never leave), and an Environment whose webhook URL is
 * the cloud metadata address is not Ready, with the reason `WebhookURLRefused`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { createContext } from '../../src/app/context.js';
import { EnvironmentReason } from '../../src/domain/conditions.js';
const WEBHOOK_URL_REFUSED = EnvironmentReason.WebhookURLRefused;
import { startHttpServer, type RunningServer } from '../../src/http/server.js';
import { GROUP, VERSION, type EnvironmentResource } from '../../src/k8s/resources.js';
import { KubeStore } from '../../src/k8s/store.js';
import { createTestNamespace, eventually, testKubeConfig, testLogger } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { testConfig } from '../support/config.js';
import { condition, readCustom } from '../support/kube.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
const CLIENT_SECRET = 'egress-test-client-secret-0123456789';
const REFRESH_TOKEN = 'egress-test-refresh-token';

describe('token URL templated to a private host', () => {
  let ns: Awaited<ReturnType<typeof createTestNamespace>>;
  let env: TestEnvironment;
  let store: KubeStore;
  let server: RunningServer;
  let victim: Server;
  let victimPort: number;
  const victimBodies: string[] = [];
  const provider = `egress-token-${Date.now().toString(36)}`;

  beforeAll(async () => {
    victim = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        victimBodies.push(`${req.url} ${body}`);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"stolen","token_type":"bearer"}');
      });
    });
    await new Promise<void>((r) => victim.listen(0, '127.0.0.1', r));
    victimPort = (victim.address() as AddressInfo).port;
    ns = await createTestNamespace(kc, 'egress-token');
    env = await createEnvironment(kc, ns.name);
    await applyProvider(kc, provider, {
      displayName: 'Templated token host',
      authMode: 'OAUTH2',
      // Declared hosts, so the configuration rules let them through and the egress guard decides.
      connectionConfiguration: [{ name: 'host', enum: ['127.0.0.1', '2130706433', 'localhost'], required: true }],
      authorizationUrl: `https://\${connectionConfig.host}/authorize`,
      tokenUrl: `http://\${connectionConfig.host}:${victimPort}/token`,
    });
    await createIntegration(kc, ns.name, 'templated', { provider }, { clientId: 'egress-client', clientSecret: CLIENT_SECRET });
    // No loopback peers allowed here: the guard as a production install has it.
    const config = testConfig([ns.name], { egressAllow: [] });
    store = new KubeStore(kc, { namespaces: [ns.name], logger: testLogger() });
    await store.start();
    server = await startHttpServer(createContext({ config, logger: testLogger(), kc, store }), 0, '127.0.0.1');
    await eventually(
      () =>
        store.catalog.getProvider(provider) &&
        store.catalog.getIntegration(ns.name, 'templated') &&
        store.catalog.getReferencedSecret(ns.name, 'templated-client'),
    );
    for (const [id, host] of [
      ['loopback', '127.0.0.1'],
      ['decimal', '2130706433'],
      ['localhost', 'localhost'],
    ] as const) {
      await store.connections.createConnection({
        namespace: ns.name,
        spec: { integration: 'templated', provider, connectionId: id, authMode: 'OAUTH2', connectionConfig: { host } },
        credentials: {
          type: 'OAUTH2',
          access_token: 'old-access-token',
          refresh_token: REFRESH_TOKEN,
          expires_at: new Date(Date.now() - 60_000).toISOString(),
          raw: {},
        },
      });
    }
  });

  afterAll(async () => {
    await server?.close();
    await store?.stop();
    await deleteProvider(kc, provider);
    await ns?.delete();
    await new Promise((r) => victim?.close(r));
  });

  it('refuses the refresh before sending anything, and says why', async () => {
    for (const id of ['loopback', 'decimal', 'localhost']) {
      const res = await fetch(`${server.url}/connections/${id}?provider_config_key=templated`, {
        headers: { authorization: `Bearer ${env.secretKey}` },
      });
      const text = await res.text();
      expect([id, res.status]).toEqual([id, 503]);
      const body = JSON.parse(text) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('provider_unavailable');
      expect(body.error.message).toMatch(/egress refused: .* is a loopback address/);
      expect(text).not.toContain(CLIENT_SECRET);
      expect(text).not.toContain(REFRESH_TOKEN);
    }
    expect(victimBodies).toEqual([]);
  });
});

describe('webhook URL on the metadata address', () => {
  let ns: Awaited<ReturnType<typeof createTestNamespace>>;
  let replica: Replica;

  beforeAll(async () => {
    ns = await createTestNamespace(kc, 'egress-hook');
    await createEnvironment(kc, ns.name, { webhooks: { url: 'http://169.254.169.254/latest/meta-data/' } }, 'main');
    replica = await startReplica(kc, {
      namespaces: [ns.name],
      components: ['controller'],
      identity: 'egress',
      config: { leaderElection: false },
    });
  });

  afterAll(async () => {
    await replica?.stop();
    await ns?.delete();
  });

  const ready = (reason: string) =>
    eventually(
      async () => {
        const c = condition(await readCustom<EnvironmentResource>(kc, 'environments', ns.name, 'main'), 'Ready');
        return c?.reason === reason ? c : undefined;
      },
      20_000,
      100,
    );

  const setWebhookUrl = (url: string) =>
    kc.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: 'environments',
      name: 'main',
      body: [{ op: 'replace', path: '/spec/webhooks/url', value: url }],
    });

  it('makes the Environment not Ready with WebhookURLRefused, and Ready again once the URL is allowed', async () => {
    const refused = await ready(WEBHOOK_URL_REFUSED);
    expect(refused.status).toBe('False');
    expect(refused.message).toMatch(/spec\.webhooks\.url is refused: 169\.254\.169\.254, a metadata address/);

    for (const url of ['http://2852039166/hooks', 'http://[::ffff:169.254.169.254]/hooks', 'http://10.0.0.8/hooks']) {
      await setWebhookUrl(url);
      const c = await eventually(
        async () => {
          const e = await readCustom<EnvironmentResource>(kc, 'environments', ns.name, 'main');
          const r = condition(e, 'Ready');
          return r && e.status?.conditions?.[0]?.observedGeneration === e.metadata.generation ? r : undefined;
        },
        20_000,
        100,
      );
      expect([url, c.reason]).toEqual([url, WEBHOOK_URL_REFUSED]);
    }

    // The replica's allowlist has its loopback peers: a receiver there is fine.
    await setWebhookUrl('http://127.0.0.1:9/hooks');
    expect((await ready('Ready')).status).toBe('True');
  });
});
