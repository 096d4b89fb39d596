/**
 * OAuth 1.0a through the Connect UI against a real provider (Debian's oauthlib endpoints behind
 * http.server): request token → approval page in chromium → callback → access token; the stored
 * connection then signs a request the provider's ResourceEndpoint accepts. The authorize URL names the
 * application where the Provider says (`appNameParam`, Trello's `name`): the Environment's
 * `connectUI.appName`, else the Integration's display name.
 */
import { CustomObjectsApi } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../src/k8s/resources.js';
import { signRequest } from '../../src/modes/shared/oauth1.js';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { startOAuth1Server, type OAuth1TestServer } from '../support/servers/oauth1-server.js';
import { openConnectPopup, waitForEvent } from '../support/browser.js';
import { startConnectBed, type ConnectBed } from '../support/connect-bed.js';
import { sessionFor } from '../support/fixtures.js';
import { signatureValid } from '../support/servers/webhook-receiver.js';

const kc = testKubeConfig();
const PROVIDER = `oauth1-flow-${process.pid}`;
const CONSUMER = { clientId: 'consumer_key_latchkey_test_1', clientSecret: 'consumer-secret-of-the-test' };

let provider: OAuth1TestServer;
let bed: ConnectBed;
// Filled from the bed in beforeAll; the tests use them by name.
let { ns, env, latchkey, receiver, app, browser } = {} as ConnectBed;

beforeAll(async () => {
  bed = await startConnectBed(kc, 'connect-oauth1', 'development');
  ({ ns, env, latchkey, receiver, app, browser } = bed);
  provider = await startOAuth1Server(CONSUMER.clientId, CONSUMER.clientSecret);
  await applyProvider(kc, PROVIDER, {
    displayName: 'Tumble',
    authMode: 'OAUTH1',
    requestTokenUrl: `${provider.url}/request_token`,
    authorizationUrl: `${provider.url}/authorize`,
    tokenUrl: `${provider.url}/access_token`,
    // Trello-style: scopes and the token's lifetime on the authorize URL.
    scopeSeparator: ',',
    defaultScopes: ['read', 'write'],
    authorizationParams: { expiration: 'never' },
    appNameParam: 'name',
  });
  await createIntegration(kc, ns.name, 'tumble', { provider: PROVIDER, displayName: 'Tumble for Acme' }, CONSUMER);
  await bed.synced(
    (store) =>
      store.catalog.getIntegration(ns.name, 'tumble') &&
      store.catalog.getProvider(PROVIDER) &&
      store.catalog.readSecretValue(ns.name, 'tumble-client', 'clientSecret'),
  );
});

afterAll(async () => {
  await provider?.close();
  await deleteProvider(kc, PROVIDER);
  await bed?.close();
});

describe('OAuth 1.0a through the Connect UI', () => {
  it('runs the three-legged flow in the browser and the connection signs requests the provider accepts', async () => {
    const context = await browser.newContext();
    const token = sessionFor(env.secretKey, ns.name, { id: 'oauth1-user', tags: { team: 't1' } }, ['tumble']);
    const { app: page, popup } = await openConnectPopup(context, app.url, token);
    await popup.waitForURL((u) => u.href.startsWith(`${provider.url}/authorize`));
    const authorize = new URL(popup.url()).searchParams;
    expect([authorize.get('scope'), authorize.get('expiration')]).toEqual(['read,write', 'never']);
    // No connectUI.appName on the Environment: the Integration's display name.
    expect(authorize.get('name')).toBe('Tumble for Acme');
    await popup.click('button[value=approve]');
    const connect = await waitForEvent(page, 'connect');
    expect(connect.providerConfigKey).toBe('tumble');

    const stored = await eventually(() => latchkey.ctx.connections.getConnection(ns.name, 'tumble', connect.connectionId!));
    const creds = stored.credentials as { type: string; oauth_token: string; oauth_token_secret: string; raw: Record<string, string> };
    expect(creds.type).toBe('OAUTH1');
    expect(creds.oauth_token).toBeTruthy();
    expect(creds.raw.oauth_token).toBe(creds.oauth_token);

    const url = `${provider.url}/resource?page=2&q=${encodeURIComponent('a b/c')}`;
    const sign = {
      method: 'GET',
      url,
      consumerKey: CONSUMER.clientId,
      consumerSecret: CONSUMER.clientSecret,
      token: creds.oauth_token,
      tokenSecret: creds.oauth_token_secret,
    };
    const ok = await fetch(url, { headers: { authorization: signRequest(sign) } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ ok: true, client: CONSUMER.clientId, query: { page: '2', q: 'a b/c' } });
    // The provider really checks: a wrong token secret is refused.
    const forged = await fetch(url, { headers: { authorization: signRequest({ ...sign, tokenSecret: 'not-the-secret' }) } });
    expect(forged.status).toBe(401);

    const hook = await eventually(() => receiver.delivered().find((w) => w.json.connectionId === connect.connectionId));
    expect(signatureValid(env.webhookSigningKey, hook)).toBe(true);
    expect(hook.json).toMatchObject({
      operation: 'creation',
      provider: PROVIDER,
      endUser: { endUserId: 'oauth1-user', tags: { team: 't1' } },
    });
    await context.close();
  });

  it('reports a denial as an error page and event, and stores nothing', async () => {
    const before = latchkey.ctx.connectionScans.listConnections(ns.name).length;
    const context = await browser.newContext();
    const token = sessionFor(env.secretKey, ns.name, 'oauth1-denier', ['tumble']);
    const { app: page, popup } = await openConnectPopup(context, app.url, token);
    await popup.waitForURL((u) => u.href.startsWith(`${provider.url}/authorize`));
    await popup.click('button[value=deny]');
    await popup.waitForSelector('text=Could not connect');
    const error = await waitForEvent(page, 'error');
    expect(error).toMatchObject({ providerConfigKey: 'tumble', error: { code: 'access_denied' } });
    expect(latchkey.ctx.connectionScans.listConnections(ns.name)).toHaveLength(before);
    await context.close();
  });

  it("names the application on the authorize URL with the Environment's connectUI.appName when it has one", async () => {
    await kc.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: 'environments',
      name: env.name,
      body: [{ op: 'add', path: '/spec/connectUI', value: { appName: 'Acme Notes' } }],
    });
    await bed.synced((store) => store.catalog.listEnvironments(ns.name)[0]?.spec.connectUI?.appName === 'Acme Notes');
    const context = await browser.newContext();
    const token = sessionFor(env.secretKey, ns.name, 'oauth1-named', ['tumble']);
    const { popup } = await openConnectPopup(context, app.url, token);
    await popup.waitForURL((u) => u.href.startsWith(`${provider.url}/authorize`));
    expect(new URL(popup.url()).searchParams.get('name')).toBe('Acme Notes');
    await context.close();
  });
});
