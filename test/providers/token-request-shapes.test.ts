/**
 * Token requests in the shapes a Provider declares (issue #57, part 4), through Latchkey's real Connect
 * routes, refresh and a real API server:
 * - `tokenRequestAuthMethod: basic`: the shipped Certn and Databricks (workspace) client credentials manifests;
 * - `tokenRequestBodyFormat: json`: the shipped Vanta (client credentials) and Notion (authorization code
 *   and refresh) manifests against loopback simulators written from their docs (test/support/simulators);
 * - `tokenRequestAuthMethod: private_key_jwt` (RFC 7523 §2.2): a real oidc-provider that accepts only
 *   client assertions signed with the key whose public half it holds, for the client credentials grant
 *   (the end user types the client ID alone, the Integration holds the key) and a refresh.
 * The browser's part (the provider's consent page) is the simulator's own handler, called with the
 * authorization URL Latchkey gave; every request Latchkey sends goes over HTTPS or HTTP to the peer.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { startOidcServer, type OidcTestServer, type TestClient } from '../../dev/peers/oidc-server.js';
import { catalogSpec } from '../support/catalog-files.js';
import { consentOnSimulator } from '../support/simulated-consent.js';
import type { Replica } from '../support/replica.js';
import { startSimulatedServerBed, type SimulatedServerBed } from '../support/simulated-server-bed.js';
import { paramsOf, type SimRequest } from '../support/simulators/framework.js';
import { certn } from '../support/simulators/certn.js';
import { DATABRICKS_WORKSPACE, databricksWorkspace } from '../support/simulators/databricks.js';
import { notion } from '../support/simulators/notion.js';
import { vanta } from '../support/simulators/vanta.js';

const kc = testKubeConfig();
const P = `shapes-${process.pid}`;
const PKJ_CC = `${P}-pkj-cc`;
const PKJ_CODE = `${P}-pkj-code`;

function rsaKey(kid: string) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  // Node's own object, not a copy: oidc-provider takes only plain objects of its realm as JWKs.
  const jwk: Record<string, unknown> = publicKey.export({ format: 'jwk' });
  Object.assign(jwk, { kid, use: 'sig', alg: 'RS256' });
  return { pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), jwk };
}
const KEY = rsaKey('latchkey-test-1');
const OTHER_KEY = rsaKey('latchkey-test-1');
/** A service app registered with the Integration's public key (the end user's client ID). */
const SERVICE_APP: TestClient = {
  clientId: `svc-${randomBytes(4).toString('hex')}`,
  clientSecret: 'unused-by-private-key-jwt-0123456789',
  tokenEndpointAuthMethod: 'private_key_jwt',
  jwks: { keys: [KEY.jwk] },
};

const vantaSim = vanta();
const notionSim = notion();
const certnSim = certn();
const databricksSim = databricksWorkspace();
let oidc: OidcTestServer;
let bed: SimulatedServerBed;
let ns: SimulatedServerBed['ns'];
let latchkey: Replica;

beforeAll(async () => {
  oidc = await startOidcServer({ clients: [SERVICE_APP] });
  const integrations = ['vanta', 'notion', 'certn-cc', 'databricks-workspace', 'pkj-cc', 'pkj-wrong', 'pkj-code'];
  bed = await startSimulatedServerBed(kc, 'token-shapes', [vantaSim, notionSim, certnSim, databricksSim], {
    async prepare(namespace) {
      // The shipped manifests, under their shipped names: only their hosts' addresses differ (the egress guard's resolver).
      for (const name of ['vanta', 'notion', 'certn-cc', 'databricks-workspace']) await applyProvider(kc, name, catalogSpec(name));
      await createIntegration(kc, namespace, 'vanta', { provider: 'vanta' }, { ...vantaSim.client });
      await createIntegration(kc, namespace, 'notion', { provider: 'notion' }, { ...notionSim.client });
      await createIntegration(kc, namespace, 'certn-cc', { provider: 'certn-cc' }, { ...certnSim.client });
      await createIntegration(kc, namespace, 'databricks-workspace', { provider: 'databricks-workspace' }, { ...databricksSim.client });
      await applyProvider(kc, PKJ_CC, {
        displayName: 'Service app',
        authMode: 'OAUTH2_CC',
        tokenUrl: oidc.tokenUrl,
        tokenRequestAuthMethod: 'private_key_jwt',
        defaultScopes: ['read'],
      });
      await applyProvider(kc, PKJ_CODE, {
        displayName: 'Web app with a key',
        authMode: 'OAUTH2',
        authorizationUrl: oidc.authorizationUrl,
        tokenUrl: oidc.tokenUrl,
        tokenRequestAuthMethod: 'private_key_jwt',
      });
      await createIntegration(kc, namespace, 'pkj-cc', { provider: PKJ_CC }, { privateKey: KEY.pem, keyId: 'latchkey-test-1' });
      await createIntegration(kc, namespace, 'pkj-wrong', { provider: PKJ_CC }, { privateKey: OTHER_KEY.pem, keyId: 'latchkey-test-1' });
      await createIntegration(
        kc,
        namespace,
        'pkj-code',
        { provider: PKJ_CODE },
        { clientId: SERVICE_APP.clientId, privateKey: KEY.pem, keyId: 'latchkey-test-1' },
      );
    },
    synced: (ctx, namespace) =>
      [PKJ_CC, PKJ_CODE, 'vanta', 'notion', 'certn-cc', 'databricks-workspace'].every((p) => ctx.catalog.getProvider(p)) &&
      integrations.every((i) => ctx.catalog.readSecretValue(namespace, `${i}-client`, i.startsWith('pkj') ? 'privateKey' : 'clientId')),
  });
  ({ ns, latchkey } = bed);
}, 120_000);

afterAll(async () => {
  await bed?.close();
  for (const name of [PKJ_CC, PKJ_CODE]) await deleteProvider(kc, name);
  await oidc?.close();
});

const session = (integration: string, endUser: string) => bed.session(integration, endUser);
const submitForm = (integration: string, values: Record<string, string>, connectionConfig: Record<string, string> = {}) =>
  bed.submitForm(integration, values, connectionConfig);

const stored = (integration: string, connectionId: string) => latchkey.ctx.connections.getConnection(ns.name, integration, connectionId)!;

async function forceRefresh(integration: string, connectionId: string) {
  return latchkey.call('GET', `/connections/${encodeURIComponent(connectionId)}?provider_config_key=${integration}&force_refresh=true`);
}

const tokenRequests = (requests: SimRequest[], path: string) => requests.filter((r) => r.method === 'POST' && r.path === path);

describe('tokenRequestAuthMethod: basic, a client credentials exchange', () => {
  it("exchanges Certn's Client ID and Secret for a token as its docs show (a form, HTTP Basic), and renews it", async () => {
    const before = certnSim.state.requests.length;
    const r = await submitForm('certn-cc', { ...certnSim.client }, { host: 'demo-api.certn.co' });
    expect({ status: r.status, text: r.text }).toMatchObject({ status: 201 });
    const conn = await eventually(r.connection);
    const first = stored('certn-cc', conn.spec.connectionId);
    expect(first.credentials).toMatchObject({ type: 'OAUTH2_CC', token: certnSim.state.accessTokens.at(-1) });
    // expires_in 36000: ten hours from the exchange.
    const lifetime = Date.parse(String(first.credentials.expires_at)) - Date.parse(String(conn.metadata.creationTimestamp));
    expect(Math.abs(lifetime - 36000 * 1000)).toBeLessThan(60_000);

    const [sent] = tokenRequests(certnSim.state.requests.slice(before), '/token/');
    expect(sent!.host).toBe('demo-api.certn.co');
    expect(sent!.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded\b/);
    expect(sent!.headers.authorization).toBe(
      `Basic ${Buffer.from(`${encodeURIComponent(certnSim.client.clientId)}:${encodeURIComponent(certnSim.client.clientSecret)}`).toString('base64')}`,
    );
    expect(Object.fromEntries(sent!.form)).toEqual({ grant_type: 'client_credentials' });

    const renewed = await forceRefresh('certn-cc', conn.spec.connectionId);
    expect(renewed.status).toBe(200);
    expect(renewed.body.credentials.token).toBe(certnSim.state.accessTokens.at(-1));
    expect(renewed.body.credentials.token).not.toBe(first.credentials.token);
  });

  it('refuses a Client Secret Certn does not accept, storing nothing and naming no secret', async () => {
    const wrongSecret = randomBytes(16).toString('hex');
    const r = await submitForm('certn-cc', { clientId: certnSim.client.clientId, clientSecret: wrongSecret }, { host: 'api.certn.co' });
    expect(r.status).toBe(400);
    expect(r.text).not.toContain(wrongSecret);
    expect(r.connection()).toBeUndefined();
  });
});

describe("tokenRequestAuthMethod: basic, Databricks' service principal token (OAuth M2M)", () => {
  it('sends the client ID and OAuth secret as HTTP Basic and a form with grant_type and scope all-apis, as the docs show', async () => {
    const before = databricksSim.state.requests.length;
    const r = await submitForm('databricks-workspace', { ...databricksSim.client }, { databricksInstance: DATABRICKS_WORKSPACE });
    expect({ status: r.status, text: r.text }).toMatchObject({ status: 201 });
    const conn = await eventually(r.connection);
    const first = stored('databricks-workspace', conn.spec.connectionId);
    expect(first.credentials).toMatchObject({ type: 'OAUTH2_CC', token: databricksSim.state.accessTokens.at(-1) });

    const [sent] = tokenRequests(databricksSim.state.requests.slice(before), '/oidc/v1/token');
    expect(sent!.host).toBe(DATABRICKS_WORKSPACE);
    expect(sent!.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded\b/);
    // HTTP Basic of the client ID and secret, each form-encoded first (RFC 6749 §2.3.1: openid-client escapes a UUID's hyphens).
    const basic = /^Basic (.+)$/.exec(String(sent!.headers.authorization))![1]!;
    const [id, secret] = Buffer.from(basic, 'base64').toString('utf8').split(':').map(decodeURIComponent);
    expect({ id, secret }).toEqual({ id: databricksSim.client.clientId, secret: databricksSim.client.clientSecret });
    // Neither the client ID nor the secret in the body: the header alone authenticates.
    expect(Object.fromEntries(sent!.form)).toEqual({ grant_type: 'client_credentials', scope: 'all-apis' });

    const renewed = await forceRefresh('databricks-workspace', conn.spec.connectionId);
    expect(renewed.status).toBe(200);
    expect(renewed.body.credentials.token).toBe(databricksSim.state.accessTokens.at(-1));
    expect(renewed.body.credentials.token).not.toBe(first.credentials.token);
  });

  it('refuses an OAuth secret Databricks does not accept, storing nothing and naming no secret', async () => {
    const wrongSecret = `dose${randomBytes(16).toString('hex')}`;
    const r = await submitForm(
      'databricks-workspace',
      { clientId: databricksSim.client.clientId, clientSecret: wrongSecret },
      { databricksInstance: DATABRICKS_WORKSPACE },
    );
    expect(r.status).toBe(400);
    expect(r.text).not.toContain(wrongSecret);
    expect(r.connection()).toBeUndefined();
  });
});

describe('tokenRequestBodyFormat: json', () => {
  it('sends Vanta its client credentials request as the JSON object its docs show, and renews the same way', async () => {
    const before = vantaSim.state.requests.length;
    const r = await submitForm('vanta', { ...vantaSim.client }, { host: 'api.vanta.com' });
    expect({ status: r.status, text: r.text }).toMatchObject({ status: 201 });
    const conn = await eventually(r.connection);
    const first = stored('vanta', conn.spec.connectionId);
    expect(first.credentials).toMatchObject({ type: 'OAUTH2_CC', token: vantaSim.state.accessTokens.at(-1) });

    const [sent] = tokenRequests(vantaSim.state.requests.slice(before), '/oauth/token');
    expect(sent!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(sent!.body)).toEqual({
      grant_type: 'client_credentials',
      client_id: vantaSim.client.clientId,
      client_secret: vantaSim.client.clientSecret,
      scope: 'vanta-api.all:read',
    });

    const renewed = await forceRefresh('vanta', conn.spec.connectionId);
    expect(renewed.status).toBe(200);
    expect(renewed.body.credentials.token).toBe(vantaSim.state.accessTokens.at(-1));
    expect(renewed.body.credentials.token).not.toBe(first.credentials.token);
    const all = tokenRequests(vantaSim.state.requests.slice(before), '/oauth/token');
    expect(all.map((q) => q.headers['content-type'])).toEqual(['application/json', 'application/json']);
  });

  it('refuses a client Vanta does not accept, clearly, storing nothing and naming no secret', async () => {
    const wrongSecret = `vcs_${randomBytes(12).toString('hex')}`;
    const r = await submitForm('vanta', { clientId: vantaSim.client.clientId, clientSecret: wrongSecret }, { host: 'api.vanta.com' });
    expect(r.status).toBe(400);
    expect(r.text).toContain('did not accept this client ID and secret');
    expect(r.text).not.toContain(wrongSecret);
    expect(r.connection()).toBeUndefined();
  });

  it("exchanges Notion's code and refreshes with JSON bodies and HTTP Basic, as create-a-token and refresh-a-token show", async () => {
    const endUser = `notion-user-${randomBytes(3).toString('hex')}`;
    // The end user's consent on Notion's page: the simulator's own page, from the URL Latchkey sent the browser to.
    const { authorization, allow, cookie } = await consentOnSimulator(
      latchkey.url,
      session('notion', endUser),
      'notion',
      notionSim,
      '/v1/oauth/authorize',
    );
    expect(authorization.origin + authorization.pathname).toBe('https://api.notion.com/v1/oauth/authorize');
    expect(allow.startsWith(`${latchkey.url}/`)).toBe(true);

    const before = notionSim.state.requests.length;
    const callback = await fetch(allow, { headers: { cookie } });
    expect(callback.status).toBe(200);
    const conn = await eventually(() => latchkey.ctx.connectionScans.listConnections(ns.name).find((c) => c.spec.endUser?.id === endUser));
    const first = stored('notion', conn.spec.connectionId);
    expect(first.credentials.access_token).toBe(notionSim.state.accessTokens.at(-1));
    expect(conn.spec.connectionConfig).toEqual({ workspaceId: '3c90c3cc-0d44-4b50-8888-8dd25736052a' });

    const [exchange] = tokenRequests(notionSim.state.requests.slice(before), '/v1/oauth/token');
    expect(exchange!.headers['content-type']).toBe('application/json');
    expect(exchange!.headers.authorization).toMatch(/^Basic /);
    expect(JSON.parse(exchange!.body)).toMatchObject({ grant_type: 'authorization_code', redirect_uri: `${latchkey.url}/oauth/callback` });
    expect(JSON.parse(exchange!.body)).not.toHaveProperty('client_secret');

    const refreshed = await forceRefresh('notion', conn.spec.connectionId);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.credentials.access_token).toBe(notionSim.state.accessTokens.at(-1));
    expect(refreshed.body.credentials.access_token).not.toBe(first.credentials.access_token);
    const refresh = tokenRequests(notionSim.state.requests.slice(before), '/v1/oauth/token').find(
      (q) => paramsOf(q).get('grant_type') === 'refresh_token',
    )!;
    expect(refresh.headers['content-type']).toBe('application/json');
    expect(JSON.parse(refresh.body)).toEqual({ grant_type: 'refresh_token', refresh_token: first.credentials.refresh_token });
  });
});

describe('tokenRequestAuthMethod: private_key_jwt', () => {
  it('asks the end user for the client ID alone and gets a token with an assertion signed by the Integration key', async () => {
    const withSecret = await submitForm('pkj-cc', { clientId: SERVICE_APP.clientId, clientSecret: 'anything' });
    expect(withSecret.status).toBe(400);

    const calls = oidc.tokenCalls.length;
    const r = await submitForm('pkj-cc', { clientId: SERVICE_APP.clientId });
    // On a failure, the answer and oidc-provider's reason say why.
    expect({ status: r.status, text: r.text, refused: oidc.tokenCalls.slice(calls).map((c) => c.error) }).toMatchObject({ status: 201 });
    const conn = await eventually(r.connection);
    const first = stored('pkj-cc', conn.spec.connectionId);
    expect(first.credentials).toMatchObject({ type: 'OAUTH2_CC', client_id: SERVICE_APP.clientId });
    // oidc-provider issued it: it knows the token, for this client.
    const issued = await oidc.provider.ClientCredentials.find(first.credentials.token as string);
    expect(issued?.clientId).toBe(SERVICE_APP.clientId);
    expect(oidc.tokenCalls.slice(calls).map((c) => [c.grantType, c.status])).toEqual([['client_credentials', 200]]);

    const renewed = await forceRefresh('pkj-cc', conn.spec.connectionId);
    expect(renewed.status).toBe(200);
    expect(renewed.body.credentials.token).not.toBe(first.credentials.token);
    expect((await oidc.provider.ClientCredentials.find(renewed.body.credentials.token as string))?.clientId).toBe(SERVICE_APP.clientId);
  });

  it('is refused when the Integration key is not the one registered: a clear message, nothing stored, no key text', async () => {
    const r = await submitForm('pkj-wrong', { clientId: SERVICE_APP.clientId });
    expect(r.status).toBe(400);
    expect(r.text).toContain('did not accept this client ID');
    expect(r.text).not.toContain('and secret');
    expect(r.text).not.toContain('PRIVATE KEY');
    expect(r.connection()).toBeUndefined();
    expect(oidc.tokenCalls.at(-1)).toMatchObject({ grantType: 'client_credentials', status: 401 });
  });

  it('refreshes an authorization-code connection with a client assertion (aud: the token endpoint)', async () => {
    const tokens = await oidc.mintTokens({ clientId: SERVICE_APP.clientId });
    const imported = await latchkey.call('POST', '/connections', {
      body: {
        provider_config_key: 'pkj-code',
        connection_id: 'keyed-web-app',
        credentials: {
          type: 'OAUTH2',
          access_token: tokens.accessToken,
          refresh_token: tokens.refreshToken,
          expires_at: new Date(Date.now() - 60_000).toISOString(),
        },
      },
    });
    expect(imported.status).toBe(201);
    await eventually(() => latchkey.ctx.connections.getConnection(ns.name, 'pkj-code', 'keyed-web-app'));
    const refreshed = await forceRefresh('pkj-code', 'keyed-web-app');
    expect({ status: refreshed.status, body: refreshed.body, refused: oidc.tokenCalls.at(-1)?.error }).toMatchObject({ status: 200 });
    expect(refreshed.body.credentials.access_token).not.toBe(tokens.accessToken);
    expect(oidc.tokenCalls.at(-1)).toMatchObject({ grantType: 'refresh_token', status: 200 });
    expect((await oidc.provider.AccessToken.find(refreshed.body.credentials.access_token as string))?.clientId).toBe(SERVICE_APP.clientId);
  });
});
