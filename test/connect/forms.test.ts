/**
 * Form flows of the Connect UI in chromium: API key (fields and labels from the provider record,
 * validated before anything is stored), client credentials checked against a real token endpoint,
 * and the TBA, SIGNATURE and configuration-only NONE forms. The Environment is in production mode:
 * no connection ID reaches the frontend.
 */
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { startOidcServer, type OidcTestServer } from '../../dev/peers/oidc-server.js';
import { openConnectPopup, waitForEvent } from '../support/browser.js';
import { startConnectBed, type ConnectBed } from '../support/connect-bed.js';
import { sessionFor } from '../support/fixtures.js';
import { signatureValid } from '../support/servers/webhook-receiver.js';

const kc = testKubeConfig();
const suffix = process.pid;
const P = {
  key: `keyed-${suffix}`,
  cc: `cc-${suffix}`,
  basic: `basic-${suffix}`,
  tba: `tba-${suffix}`,
  wsse: `wsse-${suffix}`,
  none: `none-${suffix}`,
};
const M2M = { clientId: 'machine-client', clientSecret: 'machine-secret-value' };
const shots = process.env.LATCHKEY_SCREENSHOTS;

let oidc: OidcTestServer;
let bed: ConnectBed;
// Filled from the bed in beforeAll; the tests use them by name.
let { ns, env, latchkey, receiver, app, browser } = {} as ConnectBed;

beforeAll(async () => {
  bed = await startConnectBed(kc, 'connect-forms', 'production');
  ({ ns, env, latchkey, receiver, app, browser } = bed);
  oidc = await startOidcServer({ clients: [M2M] });
  await applyProvider(kc, P.key, {
    displayName: 'Keyed CRM',
    authMode: 'API_KEY',
    connectionConfiguration: [{ name: 'subdomain' }],
    fieldLabels: { apiKey: 'Personal access key', subdomain: 'Your Keyed subdomain' },
  });
  await applyProvider(kc, P.cc, { displayName: 'Machine API', authMode: 'OAUTH2_CC', tokenUrl: oidc.tokenUrl });
  await applyProvider(kc, P.basic, { displayName: 'Basic Tracker', authMode: 'BASIC' });
  await applyProvider(kc, P.tba, {
    displayName: 'Ledger Suite',
    authMode: 'TBA',
    connectionConfiguration: [{ name: 'accountId', pattern: '^[0-9]{4,10}(-sb[0-9])?$', required: true }],
  });
  await applyProvider(kc, P.wsse, { displayName: 'Signed Mail', authMode: 'SIGNATURE', signature: { protocol: 'WSSE' } });
  await applyProvider(kc, P.none, {
    displayName: 'Open Data',
    authMode: 'NONE',
    connectionConfiguration: [{ name: 'region', required: true }],
  });
  await createIntegration(kc, ns.name, 'keyed', { provider: P.key });
  await createIntegration(kc, ns.name, 'machine', { provider: P.cc });
  await createIntegration(kc, ns.name, 'tracker', { provider: P.basic });
  await createIntegration(kc, ns.name, 'ledger', { provider: P.tba }, { clientId: 'consumer-key', clientSecret: 'consumer-secret' });
  await createIntegration(kc, ns.name, 'mailer', { provider: P.wsse });
  await createIntegration(kc, ns.name, 'opendata', { provider: P.none });
  await bed.synced(
    (store) =>
      ['keyed', 'machine', 'tracker', 'ledger', 'mailer', 'opendata'].every((i) => store.catalog.getIntegration(ns.name, i)) &&
      Object.values(P).every((p) => store.catalog.getProvider(p)),
  );
});

afterAll(async () => {
  await oidc?.close();
  for (const p of Object.values(P)) await deleteProvider(kc, p);
  await bed?.close();
});

describe('Connect UI forms', () => {
  it("collects an API key with the provider's fields and labels, validates it, stores it and sends the webhook", async () => {
    const context = await browser.newContext();
    const token = sessionFor(env.secretKey, ns.name, { id: 'key-user', tags: { org: 'o1' } }, ['keyed']);
    const { app: page, popup } = await openConnectPopup(context, app.url, token);
    await popup.waitForSelector('form');
    expect(await popup.textContent('form')).toContain('Personal access key');
    expect(await popup.textContent('form')).toContain('Your Keyed subdomain');
    expect(await popup.getAttribute('#f-values-apiKey', 'type')).toBe('password');

    // Empty fields: refused in the page, nothing stored.
    await popup.click('button[type=submit]');
    expect(await popup.textContent('#f-values-apiKey-error')).toBe('Required');
    expect(latchkey.ctx.connectionScans.listConnections(ns.name)).toHaveLength(0);
    if (shots) await popup.screenshot({ path: `${shots}/connect-form.png` });

    await popup.fill('#f-values-apiKey', 'key-123456');
    await popup.fill('#f-config-subdomain', 'acme');
    await popup.click('button[type=submit]');
    const connect = await waitForEvent(page, 'connect');
    expect(connect.providerConfigKey).toBe('keyed');
    expect(connect.connectionId).toBeUndefined(); // production mode

    const conn = await eventually(() => latchkey.ctx.connectionScans.listConnections(ns.name).find((c) => c.spec.integration === 'keyed'));
    const stored = latchkey.ctx.connections.getConnection(ns.name, 'keyed', conn.spec.connectionId)!;
    expect(stored.credentials).toEqual({ type: 'API_KEY', apiKey: 'key-123456' });
    expect(stored.resource.spec).toMatchObject({
      authMode: 'API_KEY',
      connectionConfig: { subdomain: 'acme' },
      endUser: { id: 'key-user', tags: { org: 'o1' } },
    });
    const hook = await eventually(() => receiver.delivered().find((w) => w.json.connectionId === conn.spec.connectionId));
    expect(signatureValid(env.webhookSigningKey, hook)).toBe(true);
    expect(hook.json).toMatchObject({
      operation: 'creation',
      providerConfigKey: 'keyed',
      endUser: { endUserId: 'key-user', tags: { org: 'o1' } },
    });
    await context.close();
  });

  it('validates form submissions on the server too (unknown and missing fields)', async () => {
    const token = sessionFor(env.secretKey, ns.name, 'api-user', ['keyed', 'tracker']);
    const post = (body: unknown) =>
      fetch(`${latchkey.url}/connect/api/forms`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const before = latchkey.ctx.connectionScans.listConnections(ns.name).length;
    const missing = await post({ integration: 'keyed', values: { apiKey: '  ' }, connectionConfig: { subdomain: 'x' } });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({
      error: { code: 'invalid_input', errors: [{ path: 'values.apiKey', message: 'Personal access key is required' }] },
    });
    const unknown = await post({ integration: 'keyed', values: { apiKey: 'k', password: 'p' }, connectionConfig: { subdomain: 'x' } });
    expect(unknown.status).toBe(400);
    const noConfig = await post({ integration: 'keyed', values: { apiKey: 'k' } });
    expect(noConfig.status).toBe(400);
    expect(latchkey.ctx.connectionScans.listConnections(ns.name)).toHaveLength(before);
    const basic = await post({ integration: 'tracker', values: { username: 'ann', password: 'pw' } });
    expect(basic.status).toBe(201);
    expect(await basic.json()).toEqual({ data: { providerConfigKey: 'tracker' } });
    const conn = await eventually(() =>
      latchkey.ctx.connectionScans.listConnections(ns.name).find((c) => c.spec.integration === 'tracker'),
    );
    expect(latchkey.ctx.connections.getConnection(ns.name, 'tracker', conn.spec.connectionId)!.credentials).toEqual({
      type: 'BASIC',
      username: 'ann',
      password: 'pw',
    });
  });

  it('checks client credentials at the token endpoint before storing them', async () => {
    const context = await browser.newContext();
    const token = sessionFor(env.secretKey, ns.name, 'm2m-user', ['machine', 'tracker']);
    const { app: page, popup } = await openConnectPopup(context, app.url, token);
    await popup.click('button[data-integration=machine]');
    await popup.fill('#f-values-clientId', M2M.clientId);
    await popup.fill('#f-values-clientSecret', 'wrong-secret');
    await popup.click('button[type=submit]');
    await popup.waitForSelector('.form-error:not([hidden])');
    expect(await popup.textContent('.form-error')).toContain('did not accept');
    expect(latchkey.ctx.connectionScans.listConnections(ns.name).some((c) => c.spec.integration === 'machine')).toBe(false);

    await popup.fill('#f-values-clientSecret', M2M.clientSecret);
    await popup.click('button[type=submit]');
    await waitForEvent(page, 'connect');
    const conn = await eventually(() =>
      latchkey.ctx.connectionScans.listConnections(ns.name).find((c) => c.spec.integration === 'machine'),
    );
    const creds = latchkey.ctx.connections.getConnection(ns.name, 'machine', conn.spec.connectionId)!.credentials;
    expect(creds).toMatchObject({ type: 'OAUTH2_CC', client_id: M2M.clientId, client_secret: M2M.clientSecret });
    expect(typeof creds.token).toBe('string');
    // The wrong secret was refused by the real token endpoint, the right one answered a token.
    const statuses = oidc.tokenCalls.filter((c) => c.grantType === 'client_credentials').map((c) => c.status);
    expect(statuses).toEqual([401, 200]);
    await context.close();
  });

  it.each([
    {
      integration: 'ledger',
      fill: { '#f-values-tokenId': 'token-id-1', '#f-values-tokenSecret': 'token-secret-1', '#f-config-accountId': '1234567-sb1' },
      credentials: { type: 'TBA', token_id: 'token-id-1', token_secret: 'token-secret-1' },
      config: { accountId: '1234567-sb1' },
    },
    {
      integration: 'mailer',
      fill: { '#f-values-username': 'mailer_user', '#f-values-password': 'wsse-secret-1' },
      credentials: { type: 'SIGNATURE', username: 'mailer_user', password: 'wsse-secret-1' },
      config: {},
    },
    { integration: 'opendata', fill: { '#f-config-region': 'eu' }, credentials: { type: 'NONE' }, config: { region: 'eu' } },
  ])('collects the $integration form (TBA, SIGNATURE, NONE) in the browser and stores what it needs', async (c) => {
    const context = await browser.newContext();
    const token = sessionFor(env.secretKey, ns.name, `${c.integration}-user`, [c.integration]);
    const { app: page, popup } = await openConnectPopup(context, app.url, token);
    await popup.waitForSelector('form');
    for (const selector of Object.keys(c.fill)) expect(await popup.locator(selector).count()).toBe(1);
    // Empty required fields are refused in the page.
    await popup.click('button[type=submit]');
    expect(latchkey.ctx.connectionScans.listConnections(ns.name).some((x) => x.spec.integration === c.integration)).toBe(false);
    for (const [selector, value] of Object.entries(c.fill)) await popup.fill(selector, value);
    await popup.click('button[type=submit]');
    expect(await waitForEvent(page, 'connect')).toMatchObject({ providerConfigKey: c.integration });
    const conn = await eventually(() =>
      latchkey.ctx.connectionScans.listConnections(ns.name).find((x) => x.spec.integration === c.integration),
    );
    const stored = latchkey.ctx.connections.getConnection(ns.name, c.integration, conn.spec.connectionId)!;
    expect(stored.credentials).toEqual(c.credentials);
    expect(stored.resource.spec.connectionConfig ?? {}).toEqual(c.config);
    await context.close();
  });
});
