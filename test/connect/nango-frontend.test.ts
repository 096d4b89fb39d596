/**
 * Nango's frontend SDK (@nangohq/frontend, loaded unchanged from node_modules by an application page
 * on another loopback origin) opens Latchkey's Connect UI with `openConnectUI({ baseURL, apiURL })`,
 * in chromium: the frame says `ready`, gets the session token, lists the integrations, completes an
 * API-key form and an OAuth 2 flow against oidc-provider (in a popup), reports events in Nango's
 * shapes, and the SDK removes the frame on `close`.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { GROUP, VERSION } from '../../src/k8s/resources.js';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { startOidcServer, type OidcTestServer } from '../../dev/peers/oidc-server.js';
import { launchBrowser } from '../support/browser.js';
import { sealSession } from '../support/fixtures.js';
import { startReplica, type Replica } from '../support/replica.js';
import { listenOnLoopback } from '../support/servers/loopback.js';

const kc = testKubeConfig();
const custom = kc.makeApiClient(CustomObjectsApi);
const P = { key: `nango-fe-key-${process.pid}`, oauth: `nango-fe-oidc-${process.pid}` };
const CLIENT = { clientId: 'latchkey-nango-fe', clientSecret: 'nango-fe-secret-value' };
const SDK_DIR = new URL('../../../node_modules/@nangohq/frontend/dist/', import.meta.url);

interface NangoEvent {
  type: string;
  payload?: { providerConfigKey?: string; connectionId?: string; errorType?: string; errorMessage?: string };
}

interface AppSite {
  origin: string;
  close(): Promise<void>;
}

/** The application: its page and the SDK's own files (served as published), on its own origin. */
async function appSite(latchkeyUrl: string): Promise<AppSite> {
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>Nango app</title></head><body>
<button id="open">Connect</button>
<script type="module">
import Nango from '/sdk/index.js';
window.nangoEvents = [];
document.getElementById('open').addEventListener('click', () => {
  const nango = new Nango({ connectSessionToken: window.sessionToken });
  const baseURL = '${latchkeyUrl}/connect?session_token=' + encodeURIComponent(window.sessionToken);
  // window.connectOptions: what a test adds (the SDK's lang and themeOverride).
  nango.openConnectUI({ baseURL, apiURL: '${latchkeyUrl}', ...(window.connectOptions ?? {}), onEvent: (e) => window.nangoEvents.push(e) });
});
window.appReady = true;
</script></body></html>`;
  const server: Server = createServer((req, res) => {
    const sdkFile = /^\/sdk\/([a-zA-Z]+\.js)$/.exec(req.url ?? '')?.[1];
    if (!sdkFile) {
      res.writeHead(200, { 'content-type': 'text/html' }).end(html);
      return;
    }
    readFile(new URL(sdkFile, SDK_DIR)).then(
      (js) => res.writeHead(200, { 'content-type': 'text/javascript' }).end(js),
      () => res.writeHead(404).end(),
    );
  });
  const site = await listenOnLoopback(server);
  return {
    origin: site.origin,
    close: site.close,
  };
}

let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let latchkey: Replica;
let oidc: OidcTestServer;
let app: AppSite;
let browser: Browser;

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'connect-nango');
  latchkey = await startReplica(kc, { namespaces: [ns.name], selfBaseUrl: true });
  app = await appSite(latchkey.url);
  env = await createEnvironment(kc, ns.name, { mode: 'development', connectUI: { allowedOrigins: [app.origin] } });
  oidc = await startOidcServer({ clients: [{ ...CLIENT, redirectUris: [`${latchkey.url}/oauth/callback`] }] });
  await applyProvider(kc, P.key, { displayName: 'Keyed CRM', authMode: 'API_KEY' });
  await applyProvider(kc, P.oauth, {
    displayName: 'Acme Identity',
    authMode: 'OAUTH2',
    authorizationUrl: oidc.authorizationUrl,
    tokenUrl: oidc.tokenUrl,
    defaultScopes: ['openid'],
  });
  await createIntegration(kc, ns.name, 'keyed', { provider: P.key });
  await createIntegration(
    kc,
    ns.name,
    'acme',
    { provider: P.oauth, scopes: ['openid'], authorizationParams: { prompt: 'consent' } },
    CLIENT,
  );
  await eventually(
    () =>
      latchkey.ctx.store.getIntegration(ns.name, 'keyed') &&
      latchkey.ctx.store.getIntegration(ns.name, 'acme') &&
      latchkey.ctx.store.getProvider(P.key) &&
      latchkey.ctx.store.getProvider(P.oauth) &&
      latchkey.ctx.store.listEnvironments(ns.name)[0]?.spec.connectUI &&
      latchkey.ctx.store.readSecretValue(ns.name, 'acme-client', 'clientId'),
  );
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await latchkey?.stop();
  await oidc?.close();
  for (const p of Object.values(P)) await deleteProvider(kc, p);
  await ns?.delete();
});

async function open(context: BrowserContext, token: string, options: Record<string, string> = {}): Promise<{ page: Page; frame: Frame }> {
  const page = await context.newPage();
  await page.goto(`${app.origin}/`);
  await page.waitForFunction(() => (window as unknown as { appReady?: boolean }).appReady === true);
  await page.evaluate(
    ([t, o]) => {
      Object.assign(window as unknown as { sessionToken: string; connectOptions: unknown }, { sessionToken: t, connectOptions: o });
    },
    [token, options] as const,
  );
  await page.click('#open');
  const frame = await eventually(() => page.frames().find((f) => f.parentFrame() === page.mainFrame() && f.url().startsWith(latchkey.url)));
  return { page, frame };
}

const eventsOf = (page: Page) => page.evaluate(() => (window as unknown as { nangoEvents: NangoEvent[] }).nangoEvents);

async function waitForEvent(page: Page, type: string): Promise<NangoEvent> {
  await page.waitForFunction((t) => (window as unknown as { nangoEvents: NangoEvent[] }).nangoEvents.some((e) => e.type === t), type, {
    timeout: 20_000,
  });
  return (await eventsOf(page)).find((e) => e.type === type)!;
}

const frameCount = (page: Page) => page.evaluate(() => document.querySelectorAll('iframe#connect-ui').length);

function session(endUser: string, allowedIntegrations = ['keyed', 'acme']): string {
  return sealSession(env.secretKey, { namespace: ns.name, endUser: { id: endUser }, allowedIntegrations });
}

describe("Nango's frontend SDK (openConnectUI) against the Connect UI", () => {
  it("frames /connect/ with the session token's Environment's allowed origins as frame-ancestors, and none without a token", async () => {
    const res = await fetch(
      `${latchkey.url}/connect/?session_token=${session('nango-fe-csp')}&apiURL=${encodeURIComponent(latchkey.url)}&lang=en`,
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain(`frame-ancestors ${app.origin}`);
    const anonymous = await fetch(`${latchkey.url}/connect/?apiURL=${encodeURIComponent(latchkey.url)}&lang=en`);
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await anonymous.text()).not.toContain(app.origin);
    const bad = await fetch(`${latchkey.url}/connect/?namespace=UPPER`);
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  it('says ready, takes the token, lists integrations and completes an API-key form; connect then close removes the frame', async () => {
    const context = await browser.newContext();
    const token = session('nango-fe-key-user');
    const { page, frame } = await open(context, token);
    await frame.waitForSelector('button[data-integration=acme]');
    // The page takes the token out of its own address once loaded.
    expect(frame.url()).toMatch(new RegExp(`^${latchkey.url}/connect/\\?apiURL=`));
    expect(frame.url()).not.toContain(token);
    await frame.click('button[data-integration=keyed]');
    await frame.fill('#f-values-apiKey', 'nango-fe-key-1');
    await frame.click('button[type=submit]');

    const connect = await waitForEvent(page, 'connect');
    expect(connect.payload?.providerConfigKey).toBe('keyed');
    const connectionId = connect.payload!.connectionId!; // development mode
    const stored = await eventually(() => latchkey.ctx.store.getConnection(ns.name, 'keyed', connectionId));
    expect(stored.credentials).toEqual({ type: 'API_KEY', apiKey: 'nango-fe-key-1' });
    expect(stored.resource.spec.endUser).toMatchObject({ id: 'nango-fe-key-user' });

    await waitForEvent(page, 'close');
    expect((await eventsOf(page)).map((e) => e.type)).toEqual(['ready', 'connect', 'close']);
    await page.waitForFunction(() => document.querySelectorAll('iframe#connect-ui').length === 0);
    await context.close();
  });

  it('runs OAuth 2 through oidc-provider in a popup and reports connect in Nango shape', async () => {
    const context = await browser.newContext();
    const { page, frame } = await open(context, session('nango-fe-oauth-user'));
    await frame.waitForSelector('button[data-integration=acme]');
    const [popup] = await Promise.all([context.waitForEvent('page'), frame.click('button[data-integration=acme]')]);
    await popup.waitForURL((u) => u.href.startsWith(oidc.issuer), { timeout: 20_000 });
    await popup.fill('input[name=login]', 'nina');
    await popup.fill('input[name=password]', 'any-password');
    await popup.click('button[type=submit]');
    await popup.waitForSelector('text=Continue');
    const closed = popup.waitForEvent('close');
    await popup.click('text=Continue');
    await closed;

    const connect = await waitForEvent(page, 'connect');
    expect(connect.payload?.providerConfigKey).toBe('acme');
    const stored = await eventually(() => latchkey.ctx.store.getConnection(ns.name, 'acme', connect.payload!.connectionId!));
    expect((stored.credentials as { type: string }).type).toBe('OAUTH2');
    expect(stored.resource.spec.endUser).toMatchObject({ id: 'nango-fe-oauth-user' });
    await waitForEvent(page, 'close');
    expect(await frameCount(page)).toBe(0);
    await context.close();
  });

  it("shows the SDK's lang and themeOverride", async () => {
    const context = await browser.newContext({ colorScheme: 'light', locale: 'en-US' });
    const { frame } = await open(context, session('nango-fe-look'), { lang: 'fr', themeOverride: 'dark' });
    await frame.waitForSelector('button[data-integration=acme]');
    expect(await frame.getAttribute('html', 'lang')).toBe('fr');
    expect(await frame.getAttribute('html', 'data-theme')).toBe('dark');
    expect(await frame.textContent('h1')).toBe('Connecter un compte');
    expect(await frame.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(20, 23, 28)');
    await context.close();
  });

  it("closes on the frame's close button", async () => {
    const context = await browser.newContext();
    const { page, frame } = await open(context, session('nango-fe-close'));
    await frame.waitForSelector('button[data-integration=keyed]');
    await frame.click('button.close-frame');
    await waitForEvent(page, 'close');
    expect(await frameCount(page)).toBe(0);
    expect((await eventsOf(page)).map((e) => e.type)).toEqual(['ready', 'close']);
    await context.close();
  });

  it('refuses to be framed for a token that does not open: no Environment chose the frame-ancestors', async () => {
    const other = sealSession('sk_not_this_environment_key_0123456789', {
      namespace: ns.name,
      endUser: { id: 'x' },
      allowedIntegrations: ['keyed'],
    });
    const res = await fetch(`${latchkey.url}/connect/?session_token=${encodeURIComponent(other)}`);
    expect(res.status).toBe(401);
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const body = await res.text();
    expect(body).toContain('invalid_session');
    expect(body).not.toContain(app.origin);
  });

  it('keeps the connection ID from the frontend in production mode', async () => {
    await custom.patchNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: 'environments',
      name: env.name,
      body: [{ op: 'replace', path: '/spec/mode', value: 'production' }],
    });
    await eventually(() => latchkey.ctx.store.listEnvironments(ns.name)[0]?.spec.mode === 'production');
    const context = await browser.newContext();
    const { page, frame } = await open(context, session('nango-fe-prod', ['keyed']));
    await frame.fill('#f-values-apiKey', 'nango-fe-prod-key');
    await frame.click('button[type=submit]');
    const connect = await waitForEvent(page, 'connect');
    expect(connect.payload).toEqual({ providerConfigKey: 'keyed' });
    await context.close();
  });
});
