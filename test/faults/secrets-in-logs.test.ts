/**
 * Secrets in real log lines (#17): one Latchkey replica (server + webhook dispatcher) logs at `debug`
 * into memory while it runs the main flows against real peers — imports (API_KEY, BASIC, OAuth 2
 * with a refresh token), refresh success and a revoked grant at oidc-provider, the proxy to a
 * loopback upstream, an auth webhook to the webhook receiver, and a forced 500 (the connection write
 * refused inside). Then every captured line, error messages and stack traces included, is scanned
 * for every secret value the test knows.
 */
import { randomBytes } from 'node:crypto';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { startOidcServer, type OidcTestServer } from '../../dev/peers/oidc-server.js';
import { enqueueAuthWebhook } from '../../src/webhooks/auth-webhooks.js';
import { captureLogs, type LogCapture } from '../support/log-capture.js';
import { rawRequest } from '../support/proxy-bed.js';
import { startReplica, type Replica } from '../support/replica.js';
import { startUpstream, type Upstream } from '../support/servers/upstream.js';
import { webhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver.js';

const kc = testKubeConfig();
const suffix = randomBytes(3).toString('hex');
const client = { clientId: `latchkey-logscan-${suffix}`, clientSecret: `logscan-client-secret-${randomBytes(12).toString('hex')}` };
const OAUTH2 = `logscan-oauth2-${suffix}`;
const APIKEY = `logscan-apikey-${suffix}`;
const BASIC = `logscan-basic-${suffix}`;

let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let oidc: OidcTestServer;
let up: Upstream;
let receiver: WebhookReceiver;
let logs: LogCapture;
let r: Replica;
/** Every secret value this test hands to Latchkey or a peer hands back. */
const secrets = new Set<string>();

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'logscan');
  [oidc, up, receiver] = await Promise.all([
    startOidcServer({ clients: [client], accessTokenTtl: 120 }),
    startUpstream(),
    webhookReceiver(),
  ]);
  await receiver.listen();
  const base = `${up.origin}/api`;
  await Promise.all([
    applyProvider(kc, OAUTH2, {
      displayName: 'Log scan OIDC',
      authMode: 'OAUTH2',
      authorizationUrl: oidc.authorizationUrl,
      tokenUrl: oidc.tokenUrl,
      tokenRequestAuthMethod: 'body',
      proxy: { baseUrl: base },
    }),
    applyProvider(kc, APIKEY, {
      displayName: 'Log scan key',
      authMode: 'API_KEY',
      proxy: { baseUrl: base, headers: { 'x-api-key': '${apiKey}' } },
    }),
    applyProvider(kc, BASIC, { displayName: 'Log scan basic', authMode: 'BASIC', proxy: { baseUrl: base } }),
  ]);
  env = await createEnvironment(kc, ns.name, { webhooks: { url: receiver.url } });
  await createIntegration(kc, ns.name, 'oauth2', { provider: OAUTH2 }, { clientId: client.clientId, clientSecret: client.clientSecret });
  await createIntegration(kc, ns.name, 'apikey', { provider: APIKEY });
  await createIntegration(kc, ns.name, 'basic', { provider: BASIC });
  logs = captureLogs();
  r = await startReplica(kc, { namespaces: [ns.name], components: ['server', 'webhooks'], key: env.secretKey, logger: logs.logger });
  await eventually(
    () =>
      r.ctx.catalog.listEnvironments(ns.name).length > 0 &&
      r.ctx.catalog.getReferencedSecret(ns.name, 'oauth2-client') &&
      ['apikey', 'basic', 'oauth2'].every((i) => r.ctx.catalog.getIntegration(ns.name, i)) &&
      [OAUTH2, APIKEY, BASIC].every((p) => r.ctx.catalog.getProvider(p)),
    60_000,
  );
  for (const s of [env.secretKey, env.webhookSigningKey, client.clientSecret]) secrets.add(s);
}, 180_000);

afterAll(async () => {
  await r?.stop();
  await Promise.all([oidc?.close(), up?.close(), receiver?.close()]);
  await Promise.all([OAUTH2, APIKEY, BASIC].map((p) => deleteProvider(kc, p)));
  await ns?.delete();
});

const getPath = (integration: string, id: string, extra = '') =>
  `/connections/${encodeURIComponent(id)}?provider_config_key=${integration}${extra}`;

async function importOAuth2(connectionId: string) {
  const tokens = await oidc.mintTokens({ clientId: client.clientId });
  secrets.add(tokens.accessToken).add(tokens.refreshToken);
  const res = await r.call('POST', '/connections', {
    body: {
      provider_config_key: 'oauth2',
      connection_id: connectionId,
      credentials: {
        type: 'OAUTH2',
        access_token: tokens.accessToken,
        refresh_token: tokens.refreshToken,
        expires_at: new Date(Date.now() - 60_000).toISOString(),
      },
    },
  });
  expect(res.status).toBe(201);
  await eventually(() => r.ctx.connections.getConnection(ns.name, 'oauth2', connectionId));
  return tokens;
}

async function proxyGet(integration: string, connectionId: string) {
  return rawRequest(r.server!.port, {
    path: '/proxy/items',
    headers: { authorization: `Bearer ${env.secretKey}`, 'connection-id': connectionId, 'provider-config-key': integration },
  });
}

describe('secrets in real debug log lines', () => {
  it('runs imports, refreshes, the proxy, a webhook and a forced 500, and no known secret appears in any line', async () => {
    // Imports: API_KEY and BASIC, then proxied calls that carry them to the upstream.
    const apiKey = `logscan-api-key-${randomBytes(12).toString('hex')}`;
    const password = `logscan-password-${randomBytes(12).toString('hex')}`;
    secrets.add(apiKey).add(password);
    expect(
      (
        await r.call('POST', '/connections', {
          body: { provider_config_key: 'apikey', connection_id: 'k1', credentials: { type: 'API_KEY', apiKey } },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await r.call('POST', '/connections', {
          body: { provider_config_key: 'basic', connection_id: 'b1', credentials: { type: 'BASIC', username: 'scan-user', password } },
        })
      ).status,
    ).toBe(201);
    await eventually(
      () => r.ctx.connections.getConnection(ns.name, 'apikey', 'k1') && r.ctx.connections.getConnection(ns.name, 'basic', 'b1'),
    );
    const keyed = await proxyGet('apikey', 'k1');
    expect(keyed.status).toBe(200);
    expect((await proxyGet('basic', 'b1')).status).toBe(200);
    expect(up.requests.some((q) => q.headers['x-api-key'] === apiKey)).toBe(true);

    // OAuth 2 import with an expired access token: the fetch refreshes at oidc-provider (rotation on).
    await importOAuth2('o1');
    const before = oidc.refreshCalls();
    const fetched = await r.call('GET', getPath('oauth2', 'o1', '&refresh_token=true'));
    expect(fetched.status).toBe(200);
    expect(oidc.refreshCalls()).toBe(before + 1);
    secrets.add(fetched.body.credentials.access_token).add(fetched.body.credentials.refresh_token);
    expect((await proxyGet('oauth2', 'o1')).status).toBe(200);

    // Refresh failure: the grant is revoked at the provider.
    const revoked = await importOAuth2('o2');
    await oidc.revoke(revoked.refreshToken, client);
    expect((await r.call('GET', getPath('oauth2', 'o2'))).status).toBe(424);

    // A webhook, signed with the Environment's signing key, delivered to the receiver.
    await enqueueAuthWebhook(r.ctx, {
      namespace: ns.name,
      operation: 'creation',
      success: true,
      connectionId: 'k1',
      providerConfigKey: 'apikey',
      provider: APIKEY,
      endUser: { id: 'u1' },
    });
    await eventually(() => receiver.received.some((w) => w.body.includes('"k1"')), 60_000);

    // A forced 500: the connection write fails inside (an injected broken store method), with secrets in the request.
    const realCreate = r.ctx.connections.createConnection.bind(r.ctx);
    r.ctx.connections.createConnection = () =>
      Promise.reject(new Error('injected: secrets is forbidden: the API server refused the write'));
    try {
      const failed = await r.call('POST', '/connections', {
        body: { provider_config_key: 'apikey', connection_id: 'k500', credentials: { type: 'API_KEY', apiKey } },
      });
      expect(failed.status).toBe(500);
      expect(JSON.stringify(failed.body)).not.toContain(apiKey);
    } finally {
      r.ctx.connections.createConnection = realCreate;
    }

    // The scan: lines were really written (debug included), and none holds a secret.
    expect(logs.lines.length).toBeGreaterThan(10);
    expect(logs.lines.some((l) => l.includes('"level":20'))).toBe(true);
    expect(logs.lines.some((l) => l.includes('unhandled error'))).toBe(true);
    const leaks = logs.leaks(secrets);
    expect(leaks.map((l) => `${l.secret.slice(0, 6)}… in ${l.line.slice(0, 300)}`)).toEqual([]);
  }, 180_000);
});
