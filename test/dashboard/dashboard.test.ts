/**
 * The operations dashboard in Chromium, against a real control plane and oidc-provider. An end
 * user's re-authorization is denied at the provider; three days later (the clock moves) the
 * operator signs in, finds the connection, follows its `errors[].log_id` to the log entry, forces
 * a refresh, deletes a connection after confirming, searches the logs and opens one by ID. The
 * session is an HttpOnly, SameSite=Strict cookie; requests without the dashboard's header or from
 * another origin are refused. (The screenshots in docs/dashboard.md are taken by test/docs/screenshots.test.ts.)
 * The denied re-authorization and the clock's move happen in beforeAll; each case signs in with a
 * browser context of its own, so any one of them runs alone (-t).
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { startOidcServer, type OidcTestServer } from '../../dev/peers/oidc-server.js';
import { launchBrowser } from '../support/browser.js';
import { startOplogServer, type OplogServer } from '../oplog/support.js';

const kc = testKubeConfig();
const client = { clientId: 'latchkey-dashboard-test', clientSecret: 'dashboard-test-secret-0123456789' };
// Toggl has a shipped logo (simple-icons); no other test file uses the name.
const P = { oauth: `dash-oidc-${process.pid}`, key: `dash-key-${process.pid}`, logo: 'toggl' };
const DAY = 86_400_000;

let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let oidc: OidcTestServer;
let lk: OplogServer;
let browser: Browser;
/** The failed re-authorization's log entry (made in beforeAll). */
let logId: string;
const minted: string[] = [];
const contexts: BrowserContext[] = [];

async function rest(method: string, path: string, body?: unknown) {
  const res = await lk.call(method, path, { body });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function importOAuth(connectionId: string, email: string) {
  const t = await oidc.mintTokens({ clientId: client.clientId });
  minted.push(t.accessToken, t.refreshToken);
  await rest('POST', '/connections', {
    provider_config_key: 'acme',
    connection_id: connectionId,
    end_user: { id: `user-${connectionId}`, email },
    metadata: { plan: 'pro' },
    credentials: {
      type: 'OAUTH2',
      access_token: t.accessToken,
      refresh_token: t.refreshToken,
      expires_at: new Date(Date.now() + 3600_000).toISOString(),
    },
  });
}

/** Waits until the page has rendered after an action (the script counts its renders). */
async function rendered(page: Page, after?: string) {
  await page.waitForFunction(
    (prev) => document.body.dataset.rendered !== undefined && document.body.dataset.rendered !== prev,
    after ?? null,
  );
}
const renderCount = (page: Page) => page.evaluate(() => document.body.dataset.rendered);

/** An operator's browser signed in with the secret key, on the connections page. */
async function signedIn(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${lk.url}/dashboard`);
  await page.waitForSelector('#sign-in');
  await page.fill('#secret-key', env.secretKey);
  await page.click('#sign-in button[type=submit]');
  await page.waitForSelector('h1:has-text("Connections")');
  return { context, page };
}

afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close();
});

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'dashboard');
  lk = await startOplogServer(kc, ns.name, '');
  oidc = await startOidcServer({ clients: [{ ...client, redirectUris: [`${lk.url}/oauth/callback`] }] });
  await applyProvider(kc, P.oauth, {
    displayName: 'Acme Identity',
    authMode: 'OAUTH2',
    authorizationUrl: oidc.authorizationUrl,
    tokenUrl: oidc.tokenUrl,
    tokenRequestAuthMethod: 'body',
    defaultScopes: ['openid', 'offline_access'],
  });
  await applyProvider(kc, P.key, { displayName: 'Keyed CRM', authMode: 'API_KEY' });
  await applyProvider(kc, P.logo, { displayName: 'Toggl', authMode: 'API_KEY' });
  env = await createEnvironment(kc, ns.name, { mode: 'development' });
  await createIntegration(kc, ns.name, 'acme', { provider: P.oauth, displayName: 'Acme workspace' }, client);
  await createIntegration(kc, ns.name, 'crm', { provider: P.key });
  await createIntegration(kc, ns.name, 'toggl', { provider: P.logo });
  await eventually(
    () =>
      lk.ctx.catalog.getIntegration(ns.name, 'toggl') &&
      lk.ctx.catalog.getIntegration(ns.name, 'crm') &&
      lk.ctx.catalog.getProvider(P.key) &&
      lk.ctx.catalog.getProvider(P.oauth),
  );
  await eventually(async () => (await lk.call('GET', '/providers', { key: env.secretKey })).status === 200);
  // From here on the REST calls use the secret key.
  const call = lk.call.bind(lk);
  lk.call = (m, p, o = {}) => call(m, p, { key: env.secretKey, ...o });

  await importOAuth('acme-reauth', 'ops-team@example.test');
  await importOAuth('acme-good', 'good@example.test');
  for (let i = 0; i < 30; i++) {
    await rest('POST', '/connections', {
      provider_config_key: 'crm',
      connection_id: `crm-${String(i).padStart(2, '0')}`,
      end_user: { id: `crm-user-${i}`, email: `crm${i}@example.test` },
      credentials: { type: 'API_KEY', apiKey: `crm-api-key-${i}-abcdefghijklmnop` },
    });
  }
  await eventually(() => lk.ctx.connectionScans.listConnections(ns.name).length === 32);
  browser = await launchBrowser();

  // An end user denies the re-authorization at the provider; the connection records it, and 3 days pass.
  const session = await rest('POST', '/connect/sessions/reconnect', { connection_id: 'acme-reauth', integration_id: 'acme' });
  const endUser = await browser.newContext();
  const connect = await endUser.newPage();
  // One integration in a reconnect session: the page goes straight to the provider.
  await connect.goto(session.data.connect_link);
  await connect.waitForURL((u) => u.href.startsWith(oidc.issuer), { timeout: 20_000 });
  await connect.fill('input[name=login]', 'erin');
  await connect.fill('input[name=password]', 'any-password');
  await connect.click('button[type=submit]');
  await connect.click('text=[ Cancel ]');
  await connect.waitForSelector('text=Could not connect');
  await endUser.close();
  const conn = await eventually(() => {
    const c = lk.ctx.connections.getConnection(ns.name, 'acme', 'acme-reauth');
    return c?.resource.status?.errors?.length ? c : undefined;
  });
  logId = conn.resource.status!.errors![0]!.logId;
  await lk.ctx.oplog!.flush();
  lk.clock.advance(3 * DAY);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await lk?.close();
  await oidc?.close();
  await Promise.all([deleteProvider(kc, P.oauth), deleteProvider(kc, P.key), deleteProvider(kc, P.logo)]);
  await ns?.delete();
});

describe('dashboard', () => {
  it('an end user denied the re-authorization 3 days ago: the REST API shows the error and its log entry', async () => {
    const list = await rest('GET', '/connections?connectionId=acme-reauth');
    expect(list.connections[0].errors).toEqual([{ type: 'auth', log_id: logId }]);
    const entry = await rest('GET', `/logs/${logId}`);
    expect(entry).toMatchObject({ operation: 'authorization', step: 'callback', outcome: 'failure', connection_id: 'acme-reauth' });
    expect(entry.messages.join(' ')).toContain('access_denied');
    // What the provider said, beyond what the end user was shown.
    expect(entry.messages.join(' ')).toContain('The provider answered error=access_denied');
    expect(lk.clock.now() - Date.parse(entry.time)).toBeGreaterThanOrEqual(3 * DAY);
  });

  it('signs in with the secret key into an HttpOnly SameSite=Strict cookie, never the URL or storage', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    contexts.push(context);
    const page = await context.newPage();
    const res = await page.goto(`${lk.url}/dashboard`);
    expect(res!.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(res!.headers()['content-security-policy']).not.toContain('unsafe-inline');
    await page.waitForSelector('#sign-in');
    await page.fill('#secret-key', 'sk_wrong_key');
    await page.click('#sign-in button[type=submit]');
    await page.waitForSelector('#sign-in-error:has-text("does not belong")');
    await page.fill('#secret-key', env.secretKey);
    await page.click('#sign-in button[type=submit]');
    await page.waitForSelector('h1:has-text("Connections")');
    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ name: 'latchkey_dashboard', httpOnly: true, sameSite: 'Strict', path: '/dashboard' });
    expect(cookies[0]!.value).not.toContain(env.secretKey);
    expect(page.url()).not.toContain(env.secretKey);
    const storage = await page.evaluate(
      () => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie,
    );
    expect(storage).not.toContain(env.secretKey);
    expect(storage).not.toContain('latchkey_dashboard');
  });

  it('lists integrations with their logos and connection counts and opens the Connect UI to test one', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${lk.url}/dashboard#/integrations`);
    await page.waitForSelector('tr[data-integration=crm]');
    expect(await page.textContent('tr[data-integration=crm]')).toContain('30');
    expect(await page.textContent('tr[data-integration=acme]')).toContain('Acme workspace');
    // A shipped provider's logo, from this server (the dashboard's CSP admits no other); the initial otherwise.
    const logo = await page.waitForSelector('tr[data-integration=toggl] img.logo');
    expect(await logo.getAttribute('src')).toBe('/connect/logos/toggl.svg');
    await page.waitForFunction((img) => (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth > 0, logo);
    expect(await page.textContent('tr[data-integration=crm] .logo.initial')).toBe('K');
    const [popup] = await Promise.all([context.waitForEvent('page'), page.click('tr[data-integration=crm] button.test-connection')]);
    await popup.waitForSelector('text=Keyed CRM', { timeout: 20_000 });
    await popup.close();
  });

  it('searches connections by e-mail and pages through many without loading them all', async () => {
    const { page } = await signedIn();
    await page.goto(`${lk.url}/dashboard#/connections`);
    await page.waitForSelector('#total');
    expect(await page.textContent('#total')).toBe('32 matching');
    expect(await page.locator('tbody tr').count()).toBe(25);
    await page.click('#next-page');
    await page.waitForSelector('tr[data-connection=crm-29]');
    expect(await page.locator('tbody tr').count()).toBe(7);
    await page.goto(`${lk.url}/dashboard#/connections`);
    // The first page again, rendered anew: the search form of the page before would be replaced under the typing.
    await page.waitForFunction(
      () => document.querySelectorAll('tbody tr').length === 25 && !document.querySelector('tr[data-connection=crm-29]'),
    );
    await page.fill('#search', 'ops-team@');
    await page.click('#search-form button[type=submit]');
    await page.waitForSelector('#total:has-text("1 matching")');
    expect(await page.textContent('tbody')).toContain('acme-reauth');
    expect(await page.textContent('tbody')).toContain('failing');
  });

  it('follows the failed re-authorization from the connection to its log entry, 3 days later', async () => {
    const { page } = await signedIn();
    await page.waitForSelector('#search');
    await page.fill('#search', 'ops-team@');
    await page.click('#search-form button[type=submit]');
    await page.waitForSelector('#total:has-text("1 matching")');
    await page.click('tr[data-connection=acme-reauth] a');
    await page.waitForSelector('#connection-title');
    const credentials = await page.textContent('#credentials');
    expect(credentials).toContain('•••• ');
    for (const t of minted) expect(await page.content()).not.toContain(t);
    expect(await page.textContent('a.log-id')).toBe(logId);
    await page.click('a.log-id');
    await page.waitForSelector('#log-entry');
    expect(await page.textContent('#log-entry-id')).toBe(logId);
    expect(await page.textContent('#log-messages')).toContain('access_denied');
    expect(await page.textContent('#log-entry')).toContain('failure');
  });

  it('forces a refresh', async () => {
    const { page } = await signedIn();
    await page.goto(`${lk.url}/dashboard#/connection/acme/acme-good`);
    await page.waitForSelector('#force-refresh');
    const before = lk.ctx.connections.getConnection(ns.name, 'acme', 'acme-good')!.credentials.access_token;
    await page.click('#force-refresh');
    await page.waitForSelector('#action-status:has-text("Refreshed.")', { timeout: 20_000 });
    const after = lk.ctx.connections.getConnection(ns.name, 'acme', 'acme-good')!.credentials.access_token;
    expect(after).not.toBe(before);
    expect(await page.content()).not.toContain(String(after));
    // The refresh answer's `scope` is the grant's now: shown on the page (an imported connection had none).
    const scopes = lk.ctx.connections.getConnection(ns.name, 'acme', 'acme-good')!.credentials.granted_scopes as string[] | undefined;
    expect(scopes?.length).toBeGreaterThan(0);
    expect(await page.textContent('#granted-scopes')).toBe(scopes!.join(' '));
    await lk.ctx.oplog!.flush();
    const log = await rest('GET', '/logs?integration=acme&connection_id=acme-good&operation=refresh');
    expect(log.logs[0]).toMatchObject({ outcome: 'success', step: 'fetch' });
  });

  it('deletes a connection only after confirmation', async () => {
    // A connection of its own to delete (the other cases count the ones made in beforeAll).
    await rest('POST', '/connections', {
      provider_config_key: 'crm',
      connection_id: 'crm-to-delete',
      end_user: { id: 'crm-user-delete', email: 'delete@example.test' },
      credentials: { type: 'API_KEY', apiKey: 'crm-api-key-delete-abcdefghijklmnop' },
    });
    await eventually(() => lk.ctx.connections.getConnection(ns.name, 'crm', 'crm-to-delete'));
    const { page } = await signedIn();
    await page.goto(`${lk.url}/dashboard#/connection/crm/crm-to-delete`);
    await page.waitForSelector('#delete');
    page.once('dialog', (d) => void d.dismiss());
    await page.click('#delete');
    await page.waitForSelector('#action-status:has-text("Not deleted.")');
    expect(lk.ctx.connections.getConnection(ns.name, 'crm', 'crm-to-delete')).toBeDefined();
    page.once('dialog', (d) => void d.accept());
    await page.click('#delete');
    await page.waitForSelector('h1:has-text("Connections")');
    await eventually(() => !lk.ctx.connections.getConnection(ns.name, 'crm', 'crm-to-delete'));
  });

  it('searches the logs and opens one by a pasted ID', async () => {
    const { page } = await signedIn();
    await lk.ctx.oplog!.flush();
    await page.goto(`${lk.url}/dashboard#/logs?operation=authorization&outcome=failure`);
    await page.waitForSelector('tr.log-row');
    expect(await page.textContent('tbody')).toContain(logId);
    // Only the hash changes: the filtered list stays on screen until the new one renders, and would take the form with it.
    const listed = await renderCount(page);
    await page.goto(`${lk.url}/dashboard#/logs`);
    await rendered(page, listed);
    await page.fill('#open-log-id', ` ${logId} `);
    const n = await renderCount(page);
    await page.click('#open-log button[type=submit]');
    await rendered(page, n);
    expect(await page.textContent('#log-entry-id')).toBe(logId);
    await page.goto(`${lk.url}/dashboard#/logs/environment.nothing-here`);
    await page.waitForSelector('#log-missing');
  });

  it('keeps the newest page when an older one answers late', async () => {
    const { page } = await signedIn();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let listAsked = false;
    // Holds the logs list's answer until the log entry opened after it has rendered.
    // A function, not a RegExp: jest's realm makes a RegExp literal fail playwright's instanceof check.
    const isList = (url: URL) => url.pathname === '/dashboard/api/logs';
    await page.route(isList, async (r) => {
      listAsked = true;
      await held;
      await r.continue();
    });
    const n = await renderCount(page);
    await page.evaluate(() => (location.hash = '#/logs'));
    await eventually(() => listAsked);
    await page.evaluate((id) => (location.hash = `#/logs/${encodeURIComponent(id)}`), logId);
    await rendered(page, n);
    expect(await page.textContent('#log-entry-id')).toBe(logId);
    const answered = page.waitForResponse((r) => isList(new URL(r.url())));
    release();
    await answered;
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 200)));
    expect(await page.textContent('#log-entry-id')).toBe(logId);
    expect(await page.$('#open-log-id')).toBeNull();
  });

  it('refuses requests without the dashboard header or from another origin, and signs out', async () => {
    const { context, page } = await signedIn();
    const cookie = (await context.cookies())[0]!;
    const headers = { cookie: `${cookie.name}=${cookie.value}` };
    expect((await fetch(`${lk.url}/dashboard/api/connections`, { headers })).status).toBe(403);
    const cross = await fetch(`${lk.url}/dashboard/api/connections/crm-01?provider_config_key=crm`, {
      method: 'DELETE',
      headers: { ...headers, 'x-latchkey-dashboard': '1', origin: 'https://evil.example' },
    });
    expect(cross.status).toBe(403);
    expect(lk.ctx.connections.getConnection(ns.name, 'crm', 'crm-01')).toBeDefined();
    const ok = await fetch(`${lk.url}/dashboard/api/connections?search=crm-01`, { headers: { ...headers, 'x-latchkey-dashboard': '1' } });
    expect(ok.status).toBe(200);
    const body = await ok.text();
    expect(body).not.toContain('crm-api-key-1-');

    await page.click('#sign-out');
    await page.waitForSelector('#sign-in');
    expect(await context.cookies()).toHaveLength(0);
    const after = await fetch(`${lk.url}/dashboard/api/connections`, { headers: { 'x-latchkey-dashboard': '1' } });
    expect(after.status).toBe(401);
  });
});
