/**
 * Nango's frontend SDK (@nangohq/frontend, loaded unchanged from node_modules by an application page
 * on another loopback origin) opens Latchkey's Connect UI with `openConnectUI({ baseURL, apiURL })`,
 * exactly as Nango documents it (the token given as `connectSessionToken`), in chromium: the frame says
 * `ready`, gets the session token, lists the integrations, completes an API-key form and an OAuth 2
 * flow against oidc-provider (in a popup), reports events in Nango's shapes, and the SDK removes the
 * frame on `close`. From an origin the Environment does not allow, the frame shows nothing and stores
 * nothing.
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

/**
 * The application: its page and the SDK's own files (served as published), on its own origin;
 * `/outer` is a page of this origin that frames `outerOf` (another site's application page).
 */
async function appSite(latchkeyUrl: string, outerOf = ''): Promise<AppSite> {
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>Nango app</title></head><body>
<button id="open">Connect</button>
<script type="module">
import Nango from '/sdk/index.js';
window.nangoEvents = [];
document.getElementById('open').addEventListener('click', () => {
  const nango = new Nango({ connectSessionToken: window.sessionToken });
  // window.connectOptions: what a test adds (the SDK's lang and themeOverride).
  nango.openConnectUI({ baseURL: '${latchkeyUrl}/connect', apiURL: '${latchkeyUrl}', ...(window.connectOptions ?? {}), onEvent: (e) => window.nangoEvents.push(e) });
});
window.appReady = true;
</script></body></html>`;
  const outer = `<!doctype html><html><body><iframe id="app" src="${outerOf}" style="width:100%;height:600px"></iframe></body></html>`;
  const server: Server = createServer((req, res) => {
    if (req.url === '/outer') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(outer);
      return;
    }
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
/** The same page and SDK on an origin the Environment does not list. */
let stranger: AppSite;
let browser: Browser;

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'connect-nango');
  latchkey = await startReplica(kc, { namespaces: [ns.name], selfBaseUrl: true });
  app = await appSite(latchkey.url);
  stranger = await appSite(latchkey.url, `${app.origin}/`);
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
  await stranger?.close();
  await latchkey?.stop();
  await oidc?.close();
  for (const p of Object.values(P)) await deleteProvider(kc, p);
  await ns?.delete();
});

async function open(
  context: BrowserContext,
  token: string,
  options: Record<string, string> = {},
  site: AppSite = app,
): Promise<{ page: Page; frame: Frame }> {
  const page = await context.newPage();
  await page.goto(`${site.origin}/`);
  return { page, frame: await openIn(page.mainFrame(), token, options) };
}

/** Clicks "Connect" on the application page in `appFrame`; the Connect UI's frame under it. */
async function openIn(appFrame: Frame, token: string, options: Record<string, string> = {}): Promise<Frame> {
  await appFrame.waitForFunction(() => (window as unknown as { appReady?: boolean }).appReady === true);
  await appFrame.evaluate(
    ([t, o]) => {
      Object.assign(window as unknown as { sessionToken: string; connectOptions: unknown }, { sessionToken: t, connectOptions: o });
    },
    [token, options] as const,
  );
  await appFrame.click('#open');
  return eventually(() => appFrame.childFrames().find((f) => f.url().startsWith(latchkey.url)));
}

const eventsOf = (page: Page | Frame) => page.evaluate(() => (window as unknown as { nangoEvents: NangoEvent[] }).nangoEvents);

async function waitForEvent(page: Page | Frame, type: string): Promise<NangoEvent> {
  await page.waitForFunction((t) => (window as unknown as { nangoEvents: NangoEvent[] }).nangoEvents.some((e) => e.type === t), type, {
    timeout: 20_000,
  });
  return (await eventsOf(page)).find((e) => e.type === type)!;
}

const frameCount = (page: Page) => page.evaluate(() => document.querySelectorAll('iframe#connect-ui').length);

function session(endUser: string, allowedIntegrations = ['keyed', 'acme']): string {
  return sealSession(env.secretKey, { namespace: ns.name, endUser: { id: endUser }, allowedIntegrations });
}

const connectionsOf = (endUser: string) => latchkey.ctx.store.listConnections(ns.name).filter((c) => c.spec.endUser?.id === endUser);

/** What a frame offers to click or type into. */
const controlsIn = (frame: Frame) => frame.$$eval('button, input, a, select, textarea, [tabindex]', (nodes) => nodes.length);

describe("Nango's frontend SDK (openConnectUI) against the Connect UI", () => {
  it('lets the SDK frame /connect/, which names no Environment’s origins, and the token never in the URL', async () => {
    const res = await fetch(`${latchkey.url}/connect/?apiURL=${encodeURIComponent(latchkey.url)}&lang=en`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain('frame-ancestors *');
    expect(await res.text()).not.toContain(app.origin);
    const bad = await fetch(`${latchkey.url}/connect/?namespace=UPPER`);
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  it('says ready, takes the token, lists integrations and completes an API-key form; connect then close removes the frame', async () => {
    const context = await browser.newContext();
    const token = session('nango-fe-key-user');
    const { page, frame } = await open(context, token);
    expect(frame.url()).toMatch(new RegExp(`^${latchkey.url}/connect/\\?apiURL=`));
    expect(frame.url()).not.toContain(token);
    await frame.waitForSelector('button[data-integration=acme]');
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

  it("closes on the frame's close button; an invalid token is an error event in Nango's shape", async () => {
    const context = await browser.newContext();
    const { page, frame } = await open(context, session('nango-fe-close'));
    await frame.waitForSelector('button[data-integration=keyed]');
    await frame.click('button.close-frame');
    await waitForEvent(page, 'close');
    expect(await frameCount(page)).toBe(0);
    expect((await eventsOf(page)).map((e) => e.type)).toEqual(['ready', 'close']);

    const other = sealSession('sk_not_this_environment_key_0123456789', {
      namespace: ns.name,
      endUser: { id: 'x' },
      allowedIntegrations: ['keyed'],
    });
    const bad = await open(context, other);
    const error = await waitForEvent(bad.page, 'error');
    expect(error.payload).toEqual({ errorType: 'invalid_session', errorMessage: expect.any(String) });
    await context.close();
  });

  it('from an origin the Environment does not allow: an error event, nothing shown or stored', async () => {
    const context = await browser.newContext();
    const { page, frame } = await open(context, session('nango-fe-stranger'), {}, stranger);
    const error = await waitForEvent(page, 'error');
    expect(error.payload).toEqual({ errorType: 'origin_not_allowed', errorMessage: expect.any(String) });
    expect(error.payload?.errorMessage).not.toContain(app.origin);
    expect((await eventsOf(page)).map((e) => e.type)).toEqual(['ready', 'error']);
    expect(await controlsIn(frame)).toBe(0);
    expect((await frame.textContent('#app'))?.trim()).toBe('');
    expect(await frame.content()).not.toContain(app.origin);
    expect(connectionsOf('nango-fe-stranger')).toHaveLength(0);
    await context.close();
  });

  it("an allowed application's page framed by another origin gets nothing either (the frames above it are checked)", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${stranger.origin}/outer`);
    const appFrame = await eventually(() => page.frames().find((f) => f.url() === `${app.origin}/`));
    const frame = await openIn(appFrame, session('nango-fe-nested'));
    const error = await waitForEvent(appFrame, 'error');
    expect(error.payload).toEqual({ errorType: 'origin_not_allowed', errorMessage: expect.any(String) });
    expect(await controlsIn(frame)).toBe(0);
    expect(connectionsOf('nango-fe-nested')).toHaveLength(0);
    await context.close();
  });

  it("takes a session token in baseURL too: framed only by its Environment's origins; one that does not open is framed by no one", async () => {
    const token = session('nango-fe-in-url', ['keyed']);
    const baseURL = `${latchkey.url}/connect?session_token=${encodeURIComponent(token)}`;
    const res = await fetch(
      `${latchkey.url}/connect/?session_token=${encodeURIComponent(token)}&apiURL=${encodeURIComponent(latchkey.url)}`,
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain(`frame-ancestors ${app.origin}`);

    const context = await browser.newContext();
    const { page, frame } = await open(context, token, { baseURL });
    await frame.fill('#f-values-apiKey', 'nango-fe-in-url-key');
    expect(frame.url()).not.toContain(token);
    await frame.click('button[type=submit]');
    expect((await waitForEvent(page, 'connect')).payload?.providerConfigKey).toBe('keyed');
    await context.close();

    const other = sealSession('sk_not_this_environment_key_0123456789', {
      namespace: ns.name,
      endUser: { id: 'x' },
      allowedIntegrations: ['keyed'],
    });
    const refused = await fetch(`${latchkey.url}/connect/?session_token=${encodeURIComponent(other)}`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const body = await refused.text();
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
