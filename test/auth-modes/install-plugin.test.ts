/**
 * INSTALL_PLUGIN through the Connect UI in Chromium, against a hand-written loopback fake provider
 * (test/support/servers/plugin-install-server.ts says what it verifies: the install request's state and
 * redirect_uri, a signed callback with a fresh API key, and that only an issued key is accepted).
 * Covers: install page → signed callback → stored credential and account ID → the page's `connect`
 * event, fetch, proxy injection, and hostile callbacks (unsigned, wrongly signed, tampered, stale,
 * replayed, another flow's signature, another browser) that store nothing.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { openConnectPopup, waitForEvent } from '../support/browser.js';
import { startConnectBed, type ConnectBed } from '../support/connect-bed.js';
import { sealSession } from '../support/fixtures.js';
import { startPluginInstallServer, type PluginInstallServer } from '../support/servers/plugin-install-server.js';

const kc = testKubeConfig();
const PROVIDER = `plugin-${process.pid}`;
const INTEGRATION = 'plugin';

let peer: PluginInstallServer;
let bed: ConnectBed;
let { ns, env, latchkey, app, browser } = {} as ConnectBed;

beforeAll(async () => {
  bed = await startConnectBed(kc, 'auth-plugin', 'development');
  ({ ns, env, latchkey, app, browser } = bed);
  peer = await startPluginInstallServer({ callbackUrl: `${latchkey.url}/oauth/callback` });
  await applyProvider(kc, PROVIDER, {
    displayName: 'Plugin Provider',
    authMode: 'INSTALL_PLUGIN',
    pluginInstall: { installUrl: `${peer.origin}/install`, credentialParam: 'api_key', configParams: ['account_id'] },
    connectionConfiguration: [{ name: 'account_id', pattern: '[A-Za-z0-9_-]{1,64}', required: true }],
    proxy: { baseUrl: peer.origin, headers: { 'x-api-key': '${apiKey}' } },
  } as never);
  await createIntegration(
    kc,
    ns.name,
    INTEGRATION,
    { provider: PROVIDER },
    { clientId: 'latchkey-plugin', clientSecret: peer.signingSecret },
  );
  await bed.synced(
    (store) => store.catalog.getProvider(PROVIDER) && store.catalog.readSecretValue(ns.name, `${INTEGRATION}-client`, 'clientSecret'),
  );
}, 120_000);

afterAll(async () => {
  await peer?.close();
  await deleteProvider(kc, PROVIDER);
  await bed?.close();
});

async function api(path: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${latchkey.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${env.secretKey}`, 'content-type': 'application/json', ...(init.headers ?? {}) },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** POST `path` (an import: `/connections`, or the flat `/connection`) for the Integration, with `fields`. */
const importTo = (path: '/connections' | '/connection', fields: Record<string, unknown>) =>
  api(path, { method: 'POST', body: JSON.stringify({ provider_config_key: INTEGRATION, ...fields }) });

async function toInstallPage(context: BrowserContext, endUser: string): Promise<{ page: Page; popup: Page; state: string }> {
  const token = sealSession(env.secretKey, { namespace: ns.name, endUser: { id: endUser }, allowedIntegrations: [INTEGRATION] });
  const { app: page, popup } = await openConnectPopup(context, app.url, token);
  await popup.waitForURL((u) => u.href.startsWith(`${peer.origin}/install`), { timeout: 30_000 });
  return { page, popup, state: new URL(popup.url()).searchParams.get('state')! };
}

/** A callback as the provider would send it, signed with `secret` (the peer's by default). */
function signedCallback(fields: Record<string, string>, secret = peer.signingSecret): URLSearchParams {
  const q = new URLSearchParams(fields);
  q.set('signature', peer.sign(q, secret));
  return q;
}
const now = () => String(Math.floor(Date.now() / 1000));
const callbackUrl = (q: URLSearchParams) => `${latchkey.url}/oauth/callback?${q.toString()}`;

describe('INSTALL_PLUGIN: install page and signed callback', () => {
  it('installs through the Connect UI, stores the key and account, and the proxy injects the key', async () => {
    const context = await browser.newContext();
    const { page, popup, state } = await toInstallPage(context, 'user-plugin');
    expect(state).toMatch(/^lkf1\./);
    await popup.fill('input[name=account]', 'acme');
    await popup.click('button[type=submit]');
    const connectionId = (await waitForEvent(page, 'connect', 30_000)).connectionId!;
    await context.close();

    const conn = await eventually(() => latchkey.ctx.connections.getConnection(ns.name, INTEGRATION, connectionId));
    expect(conn.credentials.type).toBe('INSTALL_PLUGIN');
    expect(conn.credentials.apiKey).toBe(peer.keys.get('acme'));
    expect(conn.resource.spec.connectionConfig).toMatchObject({ account_id: 'acme' });
    expect(JSON.stringify(conn.resource)).not.toContain(peer.keys.get('acme'));

    const got = await api(`/connections/${connectionId}?provider_config_key=${INTEGRATION}`);
    expect(got.status).toBe(200);
    expect(got.body.credentials).toMatchObject({ type: 'INSTALL_PLUGIN', apiKey: peer.keys.get('acme') });

    const proxied = await fetch(`${latchkey.url}/proxy/v1/me`, {
      headers: { authorization: `Bearer ${env.secretKey}`, 'connection-id': connectionId, 'provider-config-key': INTEGRATION },
    });
    expect(proxied.status).toBe(200);
    expect(await proxied.json()).toEqual({ account: 'acme' });
    expect(peer.rejections).toEqual([]);
  });

  it('refuses unsigned, wrongly signed, tampered, stale, foreign and replayed callbacks, and stores nothing', async () => {
    const before = latchkey.ctx.connectionScans.listConnections(ns.name).length;
    const context = await browser.newContext();
    const { popup, state } = await toInstallPage(context, 'attacker-plugin');
    const fields = { api_key: 'pk_attacker', account_id: 'victim', timestamp: now(), state };

    // Another browser (no binding cookie), even with a valid signature: refused before the state is spent.
    expect((await fetch(callbackUrl(signedCallback(fields)))).status).toBe(403);
    // No signature.
    const unsigned = await popup.goto(callbackUrl(new URLSearchParams(fields)));
    expect(unsigned?.status()).toBe(400);
    expect(await popup.textContent('main')).toContain('not signed correctly');

    // The state was spent by that refusal: every further use of it is a replay.
    const replay = await popup.goto(callbackUrl(signedCallback(fields)));
    expect(replay?.status()).toBe(400);
    expect(await popup.textContent('main')).toContain('already completed');

    const cases: Array<[string, (state: string) => URLSearchParams, string]> = [
      ['another secret', (s) => signedCallback({ ...fields, state: s }, 'not-the-secret'), 'not signed correctly'],
      [
        'tampered after signing',
        (s) => {
          const q = signedCallback({ ...fields, state: s });
          q.set('account_id', 'someone-else');
          return q;
        },
        'not signed correctly',
      ],
      ['stale', (s) => signedCallback({ ...fields, state: s, timestamp: String(Math.floor(Date.now() / 1000) - 3600) }), 'too old'],
      ['undated', (s) => signedCallback({ api_key: 'pk_attacker', account_id: 'victim', state: s }), 'too old'],
      // Signed for another flow (its state), replayed into this one.
      ['foreign', () => signedCallback(fields), 'not signed correctly'],
      ['no credential', (s) => signedCallback({ account_id: 'victim', timestamp: now(), state: s }), 'did not send a credential'],
    ];
    for (const [what, make, text] of cases) {
      const next = await toInstallPage(context, 'attacker-plugin');
      const q = make(next.state);
      if (what === 'foreign') q.set('state', next.state);
      const res = await next.popup.goto(callbackUrl(q));
      expect([what, res?.status()]).toEqual([what, 400]);
      expect(await next.popup.textContent('main')).toContain(text);
    }
    // No state at all.
    expect((await fetch(callbackUrl(signedCallback({ api_key: 'pk_attacker', timestamp: now() })))).status).toBe(400);
    await context.close();
    expect(latchkey.ctx.connectionScans.listConnections(ns.name)).toHaveLength(before);
    expect(JSON.stringify(latchkey.ctx.connectionScans.listConnections(ns.name))).not.toContain('pk_attacker');
  });
});

describe('INSTALL_PLUGIN import', () => {
  it('imports an issued key through both endpoints (the proxy sends it), and refuses a wrong shape with a 400', async () => {
    const issued = await (async () => {
      // A key the fake really issued (through its install form), so the proxy call proves the injection.
      const context = await browser.newContext();
      const { page, popup } = await toInstallPage(context, 'import-source');
      await popup.fill('input[name=account]', 'imported');
      await popup.click('button[type=submit]');
      await waitForEvent(page, 'connect', 30_000);
      await context.close();
      return peer.keys.get('imported')!;
    })();
    const created = await importTo('/connections', {
      connection_id: 'imported-new',
      connection_config: { account_id: 'imported' },
      credentials: { type: 'INSTALL_PLUGIN', apiKey: issued },
    });
    expect(created.status).toBe(201);
    const flat = await importTo('/connection', {
      connection_id: 'imported-flat',
      api_key: issued,
      connection_config: { account_id: 'imported' },
    });
    expect(flat.status).toBeLessThan(300);
    for (const id of ['imported-new', 'imported-flat']) {
      const got = await api(`/connections/${id}?provider_config_key=${INTEGRATION}`);
      expect(got.body.credentials).toMatchObject({ type: 'INSTALL_PLUGIN', apiKey: issued });
      const proxied = await fetch(`${latchkey.url}/proxy/v1/me`, {
        headers: { authorization: `Bearer ${env.secretKey}`, 'connection-id': id, 'provider-config-key': INTEGRATION },
      });
      expect([id, proxied.status]).toEqual([id, 200]);
    }
    const before = latchkey.ctx.connectionScans.listConnections(ns.name).length;
    const wrongType = await importTo('/connections', { connection_id: 'bad1', credentials: { type: 'API_KEY', apiKey: 'k' } });
    expect(wrongType.status).toBe(400);
    const empty = await importTo('/connections', { connection_id: 'bad2', credentials: { type: 'INSTALL_PLUGIN', apiKey: '' } });
    expect(empty.status).toBe(400);
    const missing = await importTo('/connection', { connection_id: 'bad3', connection_config: { account_id: 'x' } });
    expect(missing.status).toBe(400);
    expect((missing.body.error as { code: string }).code).toBe('missing_credentials');
    expect(latchkey.ctx.connectionScans.listConnections(ns.name)).toHaveLength(before);
  });
});
