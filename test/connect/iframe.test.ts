/**
 * The Connect UI in an iframe, in chromium: the application's page (a second loopback origin) embeds
 * it with the frontend client's `mode: 'iframe'`. The Environment's `spec.connectUI.allowedOrigins`
 * becomes the page's `frame-ancestors` (an origin not listed is refused by the browser) and the
 * frame's postMessage targets. An API-key form completes inside the frame; an OAuth 2 integration
 * picked inside the frame runs in a popup against oidc-provider, and the result comes back to the
 * frame and then to the embedding page.
 */
import { createServer, type Server } from 'node:http';
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { apiMessage, statusOf } from '../../src/k8s/errors.js';
import { customObject } from '../support/kube.js';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import type { TestEnvironment } from '../../dev/fixtures.js';
import type { OidcTestServer } from '../../dev/peers/oidc-server.js';
import { eventsOf, waitForEvent, loginAndConsent } from '../support/browser.js';
import { startEmbeddedConnectBed, type EmbeddedConnectBed } from '../support/embedded-connect-bed.js';
import { sealSession, sessionFor } from '../support/fixtures.js';
import { listenOnLoopback } from '../support/servers/loopback.js';
import type { Replica } from '../support/replica.js';

const kc = testKubeConfig();
const custom = kc.makeApiClient(CustomObjectsApi);
const P = { key: `frame-key-${process.pid}`, oauth: `frame-oidc-${process.pid}` };
const CLIENT = { clientId: 'latchkey-frame-test', clientSecret: 'frame-test-secret-value' };
const OTHER_ALLOWED = 'https://app.example.com';
const shots = process.env.LATCHKEY_SCREENSHOTS;

interface AppSite {
  origin: string;
  close(): Promise<void>;
}

/**
 * An application page on its own loopback origin that embeds the Connect UI: "#inline" mounts it in
 * `#slot`, "#modal" in the client's overlay; every event lands in `window.latchkeyEvents`.
 */
async function appSite(latchkeyUrl: string): Promise<AppSite> {
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>Embedding app</title></head><body>
<h1>Embedding app</h1>
<button id="inline">Connect here</button> <button id="modal">Connect (modal)</button>
<div id="slot" style="width:480px;height:640px"></div>
<script type="module">
import { openConnectUI } from '${latchkeyUrl}/connect/client.js';
window.latchkeyEvents = [];
const open = (container) => openConnectUI({
  baseUrl: '${latchkeyUrl}', sessionToken: window.sessionToken, mode: 'iframe', container,
  onEvent: (e) => window.latchkeyEvents.push(e),
});
document.getElementById('inline').addEventListener('click', () => open(document.getElementById('slot')));
document.getElementById('modal').addEventListener('click', () => open());
window.clientReady = true;
</script></body></html>`;
  const server: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
  return listenOnLoopback(server);
}

/** The application's sites: one the Environment allows, one it does not. */
let allowed: AppSite;
let notAllowed: AppSite;
let embedded: EmbeddedConnectBed;
let ns: EmbeddedConnectBed['ns'];
let env: TestEnvironment;
let latchkey: Replica;
let oidc: OidcTestServer;
let browser: Browser;

beforeAll(async () => {
  embedded = await startEmbeddedConnectBed(kc, {
    prefix: 'connect-iframe',
    providers: P,
    client: CLIENT,
    fieldLabels: { apiKey: 'Personal access key' },
    acme: { displayName: 'Acme workspace', scopes: ['openid', 'offline_access'], authorizationParams: { prompt: 'consent' } },
    sites: async (latchkeyUrl) => {
      allowed = await appSite(latchkeyUrl);
      notAllowed = await appSite(latchkeyUrl);
      return [allowed.origin, OTHER_ALLOWED];
    },
  });
  ({ ns, env, latchkey, oidc, browser } = embedded);
});

afterAll(async () => {
  await allowed?.close();
  await notAllowed?.close();
  await embedded?.close();
});

/** Opens the application page, sets the session token and clicks a button that embeds the UI. */
async function embed(context: BrowserContext, site: AppSite, token: string, button: '#inline' | '#modal'): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${site.origin}/`);
  await page.waitForFunction(() => (window as unknown as { clientReady?: boolean }).clientReady === true);
  await page.evaluate((t) => {
    (window as unknown as { sessionToken: string }).sessionToken = t;
  }, token);
  await page.click(button);
  return page;
}

/** The embedded Connect UI's frame, once it has loaded something. */
async function connectFrame(page: Page): Promise<Frame> {
  return eventually(() => page.frames().find((f) => f.parentFrame() === page.mainFrame() && f.url() !== 'about:blank' && f.url() !== ''));
}

const frameCount = (page: Page) => page.evaluate(() => document.querySelectorAll('iframe[data-latchkey-connect]').length);

describe('Environment spec.connectUI.allowedOrigins', () => {
  const tryCreate = (allowedOrigins: unknown) =>
    custom.createNamespacedCustomObject({
      ...customObject(ns.name, 'environments', {
        kind: 'Environment',
        metadata: { name: 'another' },
        spec: { secretRef: { name: 'x' }, connectUI: { allowedOrigins } },
      }),
      dryRun: 'All',
    });

  it('accepts https origins (with a port) and http only on localhost / 127.0.0.1', async () => {
    await tryCreate(['https://app.example.com', 'https://app.example.com:8443', 'http://localhost:3000', 'http://127.0.0.1']);
  });

  it.each([
    ['a path', 'https://app.example.com/connect'],
    ['a trailing slash', 'https://app.example.com/'],
    ['plain http on another host', 'http://app.example.com'],
    ['a wildcard', 'https://*.example.com'],
    ['upper case', 'https://App.example.com'],
    ['a CSP keyword', "'self'"],
    ['a second directive', 'https://a.example.com; script-src *'],
  ])('refuses an origin with %s', async (_what, origin) => {
    let status: number | undefined;
    let message = '';
    try {
      await tryCreate([origin]);
    } catch (err) {
      status = statusOf(err);
      message = apiMessage(err);
    }
    expect(status).toBe(422);
    expect(message).toContain('each allowed origin must be an https origin');
  });
});

describe('Connect UI in an iframe', () => {
  it('sends frame-ancestors with the allowed origins on the embeddable page only', async () => {
    const framed = await fetch(`${latchkey.url}/connect/embed?namespace=${ns.name}`);
    expect(framed.status).toBe(200);
    const csp = framed.headers.get('content-security-policy')!;
    expect(csp).toContain(`frame-ancestors ${allowed.origin} ${OTHER_ALLOWED}`);
    expect(csp).toContain("default-src 'none'");
    // The page knows the origins it may talk to (and no token is in it).
    expect(await framed.text()).toContain(JSON.stringify({ namespace: ns.name, allowedOrigins: [allowed.origin, OTHER_ALLOWED] }));

    // A namespace without an Environment, the popup page and the callback page: never framed.
    const unknown = await fetch(`${latchkey.url}/connect/embed?namespace=no-such-namespace`);
    expect(unknown.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    for (const path of ['/connect', '/connect/redirect', '/oauth/callback?state=x']) {
      expect((await fetch(`${latchkey.url}${path}`)).headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
    // Bad queries are readable 400 pages, not 500s.
    for (const query of ['', '?namespace=UPPER', '?namespace=a&namespace=b', `?namespace=${ns.name}&extra=1`]) {
      const bad = await fetch(`${latchkey.url}/connect/embed${query}`);
      expect(bad.status).toBe(400);
      expect(bad.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
  });

  it('is refused by the browser on an origin that is not allowed: the frame does not render and gets no token', async () => {
    const context = await browser.newContext();
    const apiCalls: string[] = [];
    const embedCsp: string[] = [];
    context.on('request', (r) => {
      if (r.url().includes('/connect/api/')) apiCalls.push(r.url());
    });
    context.on('response', (r) => {
      if (r.url().startsWith(`${latchkey.url}/connect/embed`)) embedCsp.push(r.headers()['content-security-policy'] ?? '');
    });
    const token = sessionFor(env.secretKey, ns.name, 'framed-elsewhere', ['keyed', 'acme']);
    const page = await embed(context, notAllowed, token, '#inline');
    const csp = await eventually(() => embedCsp[0]);
    expect(csp).toContain(`frame-ancestors ${allowed.origin} ${OTHER_ALLOWED}`);
    expect(csp).not.toContain(notAllowed.origin);
    // Chromium replaces a refused frame by its error page: nothing of the Connect UI runs in it.
    const frame = await eventually(() => page.frames().find((f) => f.parentFrame() && f.url().startsWith('chrome-error://')));
    expect(await frame.$('#app')).toBeNull();
    expect(apiCalls).toEqual([]);
    expect(await eventsOf(page)).toEqual([]);

    // The same page on an allowed origin renders the list (the refusal is about the origin).
    const ok = await embed(context, allowed, token, '#inline');
    const okFrame = await connectFrame(ok);
    await okFrame.waitForSelector('button[data-integration=keyed]');
    expect(okFrame.url()).not.toContain(token);
    await context.close();
  });

  it('completes an API-key form inside the frame: connect on the embedding page, then close, and the frame is removed', async () => {
    const context = await browser.newContext();
    const token = sessionFor(env.secretKey, ns.name, 'frame-key-user', ['keyed', 'acme']);
    const page = await embed(context, allowed, token, '#inline');
    // A message the embedding page posts to itself looks like the UI's but is not from Latchkey's frame: ignored.
    await page.evaluate(() => window.postMessage({ source: 'latchkey-connect', type: 'connect', providerConfigKey: 'forged' }, '*'));
    const frame = await connectFrame(page);
    expect(frame.url()).toBe(`${latchkey.url}/connect/embed?namespace=${ns.name}`);
    await frame.click('button[data-integration=keyed]');
    await frame.waitForSelector('form');
    expect(await frame.textContent('form')).toContain('Personal access key');
    await frame.fill('#f-values-apiKey', 'framed-key-123');
    if (shots) await page.screenshot({ path: `${shots}/connect-iframe-form.png` });
    await frame.click('button[type=submit]');

    const connect = await waitForEvent(page, 'connect');
    expect(connect.providerConfigKey).toBe('keyed');
    const stored = await eventually(() => latchkey.ctx.connections.getConnection(ns.name, 'keyed', connect.connectionId!));
    expect(stored.credentials).toEqual({ type: 'API_KEY', apiKey: 'framed-key-123' });
    expect(stored.resource.spec.endUser).toMatchObject({ id: 'frame-key-user' });

    // The frame asks to be closed after a success, like the popup closing itself.
    await waitForEvent(page, 'close');
    expect((await eventsOf(page)).map((e) => e.type)).toEqual(['connect', 'close']);
    expect(await frameCount(page)).toBe(0);
    await context.close();
  });

  it('runs an OAuth 2 integration picked in the frame in a popup; the result reaches the frame, then the embedding page', async () => {
    const context = await browser.newContext();
    const token = sessionFor(env.secretKey, ns.name, 'frame-oauth-user', ['keyed', 'acme']);
    const page = await embed(context, allowed, token, '#modal');
    expect(await page.locator('[data-latchkey-overlay]').count()).toBe(1);
    const frame = await connectFrame(page);
    await frame.waitForSelector('button[data-integration=acme]');

    const [popup] = await Promise.all([context.waitForEvent('page'), frame.click('button[data-integration=acme]')]);
    await frame.waitForSelector('[data-state=waiting]');
    if (shots) await page.screenshot({ path: `${shots}/connect-iframe-waiting.png` });
    await loginAndConsent(popup, oidc.issuer, 'frank');
    const popupClosed = popup.waitForEvent('close');
    await popup.click('text=Continue');
    await popupClosed;

    await frame.waitForSelector('text=Acme workspace is connected');
    const connect = await waitForEvent(page, 'connect');
    expect(connect.providerConfigKey).toBe('acme');
    expect(typeof connect.connectionId).toBe('string'); // development mode
    await waitForEvent(page, 'close');
    expect((await eventsOf(page)).map((e) => e.type)).toEqual(['connect', 'close']);
    expect(await page.locator('[data-latchkey-overlay]').count()).toBe(0);

    const stored = await eventually(() => latchkey.ctx.connections.getConnection(ns.name, 'acme', connect.connectionId!));
    expect(stored.resource.spec.endUser).toMatchObject({ id: 'frame-oauth-user' });
    const creds = stored.credentials as { type: string; access_token: string };
    expect(creds.type).toBe('OAUTH2');
    const me = await fetch(`${oidc.issuer}/me`, { headers: { authorization: `Bearer ${creds.access_token}` } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { sub: string }).sub).toBe('frank');
    await context.close();
  });

  it('asks for a click before opening the popup for a single OAuth integration; a popup closed early offers a retry', async () => {
    const context = await browser.newContext();
    const token = sessionFor(env.secretKey, ns.name, 'frame-single', ['acme']);
    const page = await embed(context, allowed, token, '#inline');
    const frame = await connectFrame(page);
    const go = await frame.waitForSelector('text=Continue with Acme Identity');
    expect(context.pages()).toHaveLength(1); // no popup without the end user's click

    const [popup] = await Promise.all([context.waitForEvent('page'), go.click()]);
    await popup.waitForURL((u) => u.href.startsWith(oidc.issuer), { timeout: 20_000 });
    await popup.close();
    await frame.waitForSelector('text=was closed before the authorization finished');
    expect(await eventsOf(page)).toEqual([]);

    // The frame's close button removes the frame and reports close.
    await frame.click('button.close-frame');
    await waitForEvent(page, 'close');
    expect(await frameCount(page)).toBe(0);
    await context.close();
  });

  it('refuses a session token of another namespace in the frame', async () => {
    const context = await browser.newContext();
    const foreign = sealSession(env.secretKey, { namespace: 'some-other-namespace', endUser: { id: 'x' }, allowedIntegrations: ['keyed'] });
    // The client frames the other namespace's page (no Environment there: refused), so load ours with a foreign token by hand.
    const page = await context.newPage();
    await page.goto(`${allowed.origin}/`);
    await page.waitForFunction(() => (window as unknown as { clientReady?: boolean }).clientReady === true);
    await page.evaluate(
      ({ url, token }) => {
        const frame = document.createElement('iframe');
        frame.src = url;
        document.body.append(frame);
        window.addEventListener('message', (e) => {
          const data = e.data as { source?: string; type?: string };
          if (e.source === frame.contentWindow && data?.source === 'latchkey-connect') {
            if (data.type === 'ready')
              frame.contentWindow!.postMessage({ source: 'latchkey-client', type: 'session', token }, new URL(url).origin);
            else (window as unknown as { latchkeyEvents: unknown[] }).latchkeyEvents.push(data);
          }
        });
      },
      { url: `${latchkey.url}/connect/embed?namespace=${ns.name}`, token: foreign },
    );
    const frame = await connectFrame(page);
    await frame.waitForSelector('text=not valid here');
    const error = await waitForEvent(page, 'error');
    expect(error.error?.code).toBe('invalid_session');
    await context.close();
  });
});
