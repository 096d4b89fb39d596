/**
 * The OAuth 2 Connect flow in a real browser against a real authorization server (oidc-provider):
 * list → pick → login → consent → callback → `connect` event → working credentials → signed webhook;
 * the single-integration path, a reconnect, a denied consent, and a replayed callback.
 */
import { CustomObjectsApi } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../src/k8s/resources.js';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { createIntegration } from '../../dev/fixtures.js';
import { eventsOf, openConnectPopup, waitForEvent } from '../support/browser.js';
import { startOAuth2ConnectBed, type OAuth2ConnectBed } from '../support/connect-bed.js';
import { sealSession } from '../support/fixtures.js';
import { signatureValid } from '../support/servers/webhook-receiver.js';
import { ConnectionStatusWriter } from '../../src/domain/connection-status-writers.js';

const kc = testKubeConfig();
const custom = kc.makeApiClient(CustomObjectsApi);
const PROVIDER = `oidc-flow-${process.pid}`;
const CLIENT = { clientId: 'latchkey-connect-test', clientSecret: 'connect-test-secret-value' };
const shots = process.env.LATCHKEY_SCREENSHOTS;

let bed: OAuth2ConnectBed;
// Filled from the bed in beforeAll; the tests use them by name.
let { ns, env, latchkey, receiver, app, browser, oidc, loginAndConsent } = {} as OAuth2ConnectBed;

beforeAll(async () => {
  bed = await startOAuth2ConnectBed(kc, { prefix: 'connect-oauth2', provider: PROVIDER, client: CLIENT });
  ({ ns, env, latchkey, receiver, app, browser, oidc, loginAndConsent } = bed);
  await createIntegration(
    kc,
    ns.name,
    'acme',
    {
      provider: PROVIDER,
      displayName: 'Acme workspace',
      scopes: ['openid', 'offline_access', 'read'],
      authorizationParams: { prompt: 'consent' },
    },
    CLIENT,
  );
  await createIntegration(
    kc,
    ns.name,
    'acme-sandbox',
    { provider: PROVIDER, displayName: 'Acme sandbox', scopes: ['openid', 'offline_access'], authorizationParams: { prompt: 'consent' } },
    CLIENT,
  );
  await bed.synced(
    (store) =>
      store.catalog.getIntegration(ns.name, 'acme-sandbox') &&
      store.catalog.getProvider(PROVIDER) &&
      store.catalog.readSecretValue(ns.name, 'acme-client', 'clientId'),
  );
});

afterAll(async () => {
  await bed?.close();
});

async function userinfo(accessToken: string): Promise<{ status: number; sub?: string }> {
  const res = await fetch(`${oidc.issuer}/me`, { headers: { authorization: `Bearer ${accessToken}` } });
  return { status: res.status, sub: res.ok ? ((await res.json()) as { sub: string }).sub : undefined };
}

/** A session token from the REST API (secret key), as an application backend gets it. */
async function issueSession(path: string, body: unknown): Promise<string> {
  const res = await fetch(`${latchkey.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.secretKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(201);
  const { data } = (await res.json()) as { data: { token: string; connect_link: string } };
  expect(data.connect_link).toBe(`${latchkey.url}/connect?session_token=${encodeURIComponent(data.token)}`);
  return data.token;
}

/**
 * Case set-up: user-42 connects `acme` through the Connect UI, as an application's user would; waits
 * until the connection is stored and its creation webhook delivered. Returns the connection ID.
 */
async function connectAcmeAsUser42(): Promise<string> {
  const context = await browser.newContext();
  try {
    const token = await issueSession('/connect/sessions', {
      end_user: { id: 'user-42', email: 'u42@example.test', tags: { organization: 'org-7' } },
      allowed_integrations: ['acme'],
    });
    const { app: page, popup } = await openConnectPopup(context, app.url, token);
    await loginAndConsent(popup);
    await popup.click('text=Continue');
    const connectionId = (await waitForEvent(page, 'connect')).connectionId!;
    await eventually(() => latchkey.ctx.connections.getConnection(ns.name, 'acme', connectionId));
    await eventually(() => receiver.delivered().find((w) => w.json.connectionId === connectionId && w.json.operation === 'creation'));
    return connectionId;
  } finally {
    await context.close();
  }
}

describe('OAuth 2 through the Connect UI', () => {
  it('lists the integrations, runs login and consent, reports connect, stores working credentials and sends a signed webhook', async () => {
    const context = await browser.newContext();
    const token = await issueSession('/connect/sessions', {
      end_user: { id: 'user-42', email: 'u42@example.test', tags: { organization: 'org-7' } },
      allowed_integrations: ['acme', 'acme-sandbox'],
    });
    const { app: page, popup } = await openConnectPopup(context, app.url, token);
    await popup.waitForSelector('button[data-integration=acme]');
    const list = await popup.textContent('ul.integrations');
    expect(list).toContain('Acme workspace');
    expect(list).toContain('Acme sandbox');
    expect(list).toContain('Acme Identity');
    if (shots) await popup.screenshot({ path: `${shots}/connect-list.png` });

    await popup.click('button[data-integration=acme]');
    await loginAndConsent(popup);
    await popup.click('text=Continue');
    const connect = await waitForEvent(page, 'connect');
    expect(connect.providerConfigKey).toBe('acme');
    expect(typeof connect.connectionId).toBe('string'); // development mode
    const firstConnectionId = connect.connectionId!;

    // The popup closes itself after a success; the client then reports close.
    await waitForEvent(page, 'close');
    expect((await eventsOf(page)).map((e) => e.type)).toEqual(['connect', 'close']);

    const stored = await eventually(() => latchkey.ctx.connections.getConnection(ns.name, 'acme', firstConnectionId));
    expect(stored.resource.spec.endUser).toMatchObject({ id: 'user-42', tags: { organization: 'org-7' } });
    expect(stored.resource.spec.authMode).toBe('OAUTH2');
    const creds = stored.credentials as { type: string; access_token: string; refresh_token?: string; expires_at?: string };
    expect(creds.type).toBe('OAUTH2');
    expect(await userinfo(creds.access_token)).toEqual({ status: 200, sub: 'alice' });
    expect(creds.refresh_token).toBeTruthy();
    expect(Date.parse(creds.expires_at!)).toBeGreaterThan(Date.now());
    // The refresh token works at the real token endpoint.
    const refreshed = await fetch(oidc.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: creds.refresh_token!,
        client_id: CLIENT.clientId,
        client_secret: CLIENT.clientSecret,
      }),
    });
    expect(refreshed.status).toBe(200);
    // Nothing secret in the custom resource.
    const raw = await custom.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: 'connections',
      name: stored.resource.metadata.name,
    });
    expect(JSON.stringify(raw)).not.toContain(creds.access_token);

    const hook = await eventually(() => receiver.delivered().find((w) => w.json.connectionId === firstConnectionId));
    expect(signatureValid(env.webhookSigningKey, hook)).toBe(true);
    expect(signatureValid('whsec_' + Buffer.from('wrong key').toString('base64'), hook)).toBe(false);
    expect(hook.json).toEqual({
      from: 'latchkey',
      type: 'auth',
      authMode: 'OAUTH2',
      operation: 'creation',
      success: true,
      connectionId: firstConnectionId,
      endUser: { endUserId: 'user-42', tags: { organization: 'org-7' } },
      providerConfigKey: 'acme',
      provider: PROVIDER,
      environment: env.name,
    });
    await context.close();
    // Leave no connection behind for the other cases.
    await latchkey.ctx.connections.deleteConnection(ns.name, stored.resource.metadata.name);
    await eventually(() => !latchkey.ctx.connections.getConnection(ns.name, 'acme', firstConnectionId));
  });

  it('goes straight to the provider when the session allows exactly one integration', async () => {
    const context = await browser.newContext();
    const token = sealSession(env.secretKey, { namespace: ns.name, endUser: { id: 'user-single' }, allowedIntegrations: ['acme-sandbox'] });
    // The success page closes its popup after 1.5 s, which a loaded machine can let pass before the page
    // is read: kept open here (the first case sees the popup close itself).
    await context.addInitScript(() => {
      window.close = () => undefined;
    });
    const { app: page, popup } = await openConnectPopup(context, app.url, token);
    await loginAndConsent(popup, 'bob');
    expect(await popup.$('ul.integrations')).toBeNull();
    await popup.click('text=Continue');
    await popup.waitForSelector('text=is connected');
    if (shots) await popup.screenshot({ path: `${shots}/connect-success.png` });
    const connect = await waitForEvent(page, 'connect');
    expect(connect.providerConfigKey).toBe('acme-sandbox');
    const stored = await eventually(() => latchkey.ctx.connections.getConnection(ns.name, 'acme-sandbox', connect.connectionId!));
    expect(await userinfo(stored.credentials.access_token as string)).toEqual({ status: 200, sub: 'bob' });
    const hook = await eventually(() => receiver.delivered().find((w) => w.json.connectionId === connect.connectionId));
    expect(hook.json).toMatchObject({
      operation: 'creation',
      providerConfigKey: 'acme-sandbox',
      endUser: { endUserId: 'user-single', tags: {} },
    });
    await context.close();
  });

  it('re-authorizes an existing connection: same ID, metadata and end user, new credentials, errors cleared, override webhook', async () => {
    const firstConnectionId = await connectAcmeAsUser42();
    const name = latchkey.ctx.connections.getConnection(ns.name, 'acme', firstConnectionId)!.resource.metadata.name;
    const before = latchkey.ctx.connections.getConnection(ns.name, 'acme', firstConnectionId)!.credentials.access_token;
    await latchkey.ctx.connections.updateConnection(ns.name, name, (c) => ({
      ...c,
      spec: { ...c.spec, metadata: { plan: 'gold' }, connectionConfig: { region: 'eu' } },
    }));
    await latchkey.ctx.connections.updateConnectionStatus(ns.name, name, ConnectionStatusWriter.Scheduler, (s) => ({
      ...s,
      errors: [{ type: 'auth', logId: 'log-1', message: 'refresh failed' }],
      refreshAttempts: 3,
      nextRefreshAt: new Date(Date.now() - 60_000).toISOString(),
    }));
    await latchkey.ctx.connections.updateCredentials(ns.name, name, (c) => ({ ...c, refresh_token: 'refresh-token-before' }));
    const acmeConnections = () => latchkey.ctx.connectionScans.listConnections(ns.name).filter((c) => c.spec.integration === 'acme').length;
    const acmeBefore = acmeConnections();

    const context = await browser.newContext();
    const token = await issueSession('/connect/sessions/reconnect', { connection_id: firstConnectionId, integration_id: 'acme' });
    const { app: page, popup } = await openConnectPopup(context, app.url, token);
    await loginAndConsent(popup, 'alice');
    await popup.click('text=Continue');
    const connect = await waitForEvent(page, 'connect');
    expect(connect).toMatchObject({ providerConfigKey: 'acme', connectionId: firstConnectionId });

    const after = await eventually(() => {
      const c = latchkey.ctx.connections.getConnection(ns.name, 'acme', firstConnectionId);
      return c && c.credentials.access_token !== before ? c : undefined;
    });
    expect(after.resource.spec).toMatchObject({
      metadata: { plan: 'gold' },
      connectionConfig: { region: 'eu' },
      endUser: { id: 'user-42' },
    });
    expect(after.resource.status?.errors ?? []).toEqual([]);
    expect(after.resource.status?.refreshAttempts).toBe(0);
    // The provider sent a new refresh token: it replaces the old one; the next refresh follows the new expiry.
    expect(after.credentials.refresh_token).toBeTruthy();
    expect(after.credentials.refresh_token).not.toBe('refresh-token-before');
    expect(after.resource.status?.expiresAt).toBe(after.credentials.expires_at);
    const nextRefresh = Date.parse(after.resource.status!.nextRefreshAt!);
    expect(nextRefresh).toBeGreaterThan(Date.now() - 5_000);
    expect(nextRefresh).toBeLessThan(Date.parse(after.credentials.expires_at as string));
    expect(await userinfo(after.credentials.access_token as string)).toEqual({ status: 200, sub: 'alice' });
    // The same connection, not a second one.
    expect(acmeConnections()).toBe(acmeBefore);

    const hook = await eventually(() =>
      receiver.delivered().find((w) => w.json.operation === 'override' && w.json.connectionId === firstConnectionId),
    );
    expect(signatureValid(env.webhookSigningKey, hook)).toBe(true);
    expect(hook.json).toMatchObject({
      success: true,
      connectionId: firstConnectionId,
      endUser: { endUserId: 'user-42', tags: { organization: 'org-7' } },
    });
    await context.close();
  });

  it('shows a readable page and reports an error event when consent is denied; the callback cannot be replayed', async () => {
    const connectionsBefore = latchkey.ctx.connectionScans.listConnections(ns.name).length;
    const webhooksBefore = receiver.received.length;
    const context = await browser.newContext();
    const token = sealSession(env.secretKey, { namespace: ns.name, endUser: { id: 'user-deny' }, allowedIntegrations: ['acme'] });
    const { app: page, popup } = await openConnectPopup(context, app.url, token);
    await loginAndConsent(popup, 'carol');
    await popup.click('text=[ Cancel ]');
    await popup.waitForSelector('text=Could not connect');
    expect(await popup.textContent('main')).toContain('Access to Acme workspace was not granted');
    if (shots) await popup.screenshot({ path: `${shots}/connect-denied.png` });
    const error = await waitForEvent(page, 'error');
    expect(error).toMatchObject({ providerConfigKey: 'acme', error: { code: 'access_denied' } });

    // The same callback URL again (a replay) is refused.
    const replay = await context.newPage();
    const res = await replay.goto(popup.url());
    expect(res?.status()).toBe(400);
    expect(await replay.textContent('main')).toContain('already completed');
    expect(latchkey.ctx.connectionScans.listConnections(ns.name)).toHaveLength(connectionsBefore);
    expect(receiver.received.length).toBe(webhooksBefore);
    await context.close();
  });

  it('refuses a replayed successful callback, a forged state and an expired session with readable pages', async () => {
    // Forged state.
    const forged = await fetch(
      `${latchkey.url}/oauth/callback?state=lkf1.${Buffer.from(ns.name).toString('base64url')}.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA&code=x`,
    );
    expect(forged.status).toBe(400);
    expect(forged.headers.get('content-type')).toContain('text/html');
    expect(await forged.text()).toContain('not valid');
    const noState = await fetch(`${latchkey.url}/oauth/callback?code=abc`);
    expect(noState.status).toBe(400);

    // Expired session: the page says so.
    const context = await browser.newContext();
    const page = await context.newPage();
    const expired = sealSession(env.secretKey, {
      namespace: ns.name,
      endUser: { id: 'late' },
      allowedIntegrations: ['acme'],
      exp: Math.floor(Date.now() / 1000) - 5,
    });
    await page.goto(`${latchkey.url}/connect?session_token=${encodeURIComponent(expired)}`);
    await page.waitForSelector('text=Could not connect');
    expect(await page.textContent('main')).toContain('expired');
    expect(page.url()).not.toContain('session_token');

    // A successful callback replayed (code and state reused) is refused before reaching the provider.
    const token = sealSession(env.secretKey, { namespace: ns.name, endUser: { id: 'user-replay' }, allowedIntegrations: ['acme-sandbox'] });
    const { app: appPageHandle, popup } = await openConnectPopup(context, app.url, token);
    await loginAndConsent(popup, 'dave');
    const callbackUrl = new Promise<string>((resolve) =>
      popup.on('request', (r) => {
        if (r.url().startsWith(`${latchkey.url}/oauth/callback`)) resolve(r.url());
      }),
    );
    await popup.click('text=Continue');
    await waitForEvent(appPageHandle, 'connect');
    const tokenCallsBefore = oidc.tokenCalls.length;
    // From the same browser (it holds the binding cookie).
    const again = await context.request.get(await callbackUrl);
    expect(again.status()).toBe(400);
    expect(await again.text()).toContain('already completed');
    // From anywhere else: refused as another browser's flow.
    const elsewhere = await fetch(await callbackUrl);
    expect(elsewhere.status).toBe(403);
    expect(oidc.tokenCalls.length).toBe(tokenCallsBefore);
    await context.close();
  });

  it('answers the session API with JSON errors, never a 500', async () => {
    const none = await fetch(`${latchkey.url}/connect/api/session`);
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: { code: 'missing_session' } });
    const bad = await fetch(`${latchkey.url}/connect/api/session`, { headers: { authorization: 'Bearer lks_1.bm9wZQ.AAAA' } });
    expect(bad.status).toBe(401);
    const token = sealSession(env.secretKey, { namespace: ns.name, endUser: { id: 'x' }, allowedIntegrations: ['acme'] });
    const notAllowed = await fetch(`${latchkey.url}/connect/api/oauth/start`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ integration: 'acme-sandbox' }),
    });
    expect(notAllowed.status).toBe(403);
    const extra = await fetch(`${latchkey.url}/connect/api/oauth/start`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ integration: 'acme', surprise: 1 }),
    });
    expect(extra.status).toBe(400);
    const broken = await fetch(`${latchkey.url}/connect/api/forms`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(broken.status).toBe(400);
  });
});
