/**
 * The Connect UI's page in chromium: the loading indicator until the session token is set (and its
 * session answered), and the integration list: Providers' logos (allowed by the page's CSP), a
 * search field above eight integrations, and integrations that cannot work left out (a session of
 * only such integrations gets a page that says so).
 */
import { createServer, type Server } from 'node:http';
import type { BrowserContext, Page } from 'playwright-core';
import { testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { startConnectBed, type ConnectBed } from '../support/connect-bed.js';
import { sealSession } from '../support/fixtures.js';
import { listenOnLoopback } from '../support/servers/loopback.js';

const kc = testKubeConfig();
const P = { logo: `list-logo-${process.pid}`, plain: `list-plain-${process.pid}`, oauth: `list-oauth-${process.pid}` };
const NAMES = ['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo', 'Foxtrot', 'Golf', 'Hotel', 'India'];
// A 1×1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

let bed: ConnectBed;
let logos: { url: string; hits: number; close(): Promise<void> };

async function logoServer(): Promise<typeof logos> {
  const state = { hits: 0 };
  const server: Server = createServer((req, res) => {
    state.hits++;
    if (req.url === '/logo.png') res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    else res.writeHead(404).end();
  });
  const site = await listenOnLoopback(server);
  return {
    url: `${site.origin}/logo.png`,
    get hits() {
      return state.hits;
    },
    close: site.close,
  };
}

beforeAll(async () => {
  bed = await startConnectBed(kc, 'connect-list', 'development');
  logos = await logoServer();
  await applyProvider(kc, P.logo, { displayName: 'Logo CRM', authMode: 'API_KEY', logoUrl: logos.url });
  await applyProvider(kc, P.plain, { displayName: 'Plain Keys', authMode: 'API_KEY' });
  await applyProvider(kc, P.oauth, {
    displayName: 'Unfinished OAuth',
    authMode: 'OAUTH2',
    authorizationUrl: 'https://auth.example.test/authorize',
    tokenUrl: 'https://auth.example.test/token',
  });
  await createIntegration(kc, bed.ns.name, 'logo-crm', { provider: P.logo, displayName: 'Logo CRM' });
  for (const name of NAMES) await createIntegration(kc, bed.ns.name, name.toLowerCase(), { provider: P.plain, displayName: name });
  // No client Secret: it cannot work.
  await createIntegration(kc, bed.ns.name, 'unfinished', { provider: P.oauth, displayName: 'Unfinished' });
  await bed.synced(
    (store) =>
      store.catalog.getProvider(P.logo)?.spec.logoUrl &&
      store.catalog.getProvider(P.plain) &&
      store.catalog.getProvider(P.oauth) &&
      store.catalog.getIntegration(bed.ns.name, 'unfinished') &&
      NAMES.every((n) => store.catalog.getIntegration(bed.ns.name, n.toLowerCase())),
  );
});

afterAll(async () => {
  await bed?.close();
  await logos?.close();
  for (const p of Object.values(P)) await deleteProvider(kc, p);
});

function session(allowedIntegrations: string[]): string {
  return sealSession(bed.env.secretKey, { namespace: bed.ns.name, endUser: { id: 'lister' }, allowedIntegrations });
}

async function loadingShown(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const node = document.querySelector('#app .loading[role=status]');
    return Boolean(node && (node as HTMLElement).offsetParent !== null && !document.querySelector('ul.integrations'));
  });
}

/** Runs `use` in a fresh browser context, closed after. */
async function inNewContext(use: (context: BrowserContext) => Promise<void>): Promise<void> {
  const context = await bed.browser.newContext();
  try {
    await use(context);
  } finally {
    await context.close();
  }
}

describe('the Connect UI page', () => {
  it('shows the loading indicator until the session token is set and its session is read', () =>
    inNewContext(async (context) => {
      // The token by postMessage, from the window that opened the page, sent only when the test says.
      const app = await context.newPage();
      await app.goto(bed.app.url);
      const [page] = await Promise.all([
        context.waitForEvent('page'),
        app.evaluate((url) => {
          const w = window as unknown as { connectWindow: Window | null; connectReady?: boolean };
          // The page says "ready" to its opener once it has started and waits for the token.
          window.addEventListener('message', (e) => {
            if (e.source === w.connectWindow && (e.data as { type?: string } | null)?.type === 'ready') w.connectReady = true;
          });
          w.connectWindow = window.open(url, '_blank', 'popup');
        }, `${bed.latchkey.url}/connect`),
      ]);
      await page.waitForSelector('#app .loading[role=status]');
      await app.waitForFunction(() => (window as unknown as { connectReady?: boolean }).connectReady === true);
      expect(await loadingShown(page)).toBe(true);
      expect(await page.textContent('#app')).toContain('Loading');

      // The session answer is held back: the indicator stays until it comes.
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let asked!: () => void;
      const sessionAsked = new Promise<void>((r) => (asked = r));
      await context.route(
        (url) => url.pathname.endsWith('/connect/api/session'),
        async (route) => {
          asked();
          await held;
          await route.continue();
        },
      );
      await app.evaluate(
        ([token, origin]) => {
          (window as unknown as { connectWindow: Window }).connectWindow.postMessage(
            { source: 'latchkey-client', type: 'session', token },
            origin!,
          );
        },
        [session(['alpha', 'bravo']), bed.latchkey.url],
      );
      // The page took the token and asked for its session, whose answer is held.
      await sessionAsked;
      expect(await loadingShown(page)).toBe(true);
      release();
      await page.waitForSelector('ul.integrations');
      expect(await loadingShown(page)).toBe(false);
      expect(await page.$('#app .loading')).toBeNull();
    }));

  it('lists logos, a search field above eight integrations, and leaves out an integration that cannot work', () =>
    inNewContext(async (context) => {
      const page = await context.newPage();
      const cspViolations: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
      });
      const all = ['logo-crm', ...NAMES.map((n) => n.toLowerCase()), 'unfinished'];
      const res = await page.goto(`${bed.latchkey.url}/connect?session_token=${encodeURIComponent(session(all))}`);
      expect(res?.headers()['content-security-policy']).toContain(`img-src 'self' data: https: ${new URL(logos.url).origin};`);
      await page.waitForSelector('ul.integrations');

      // The logo is loaded (the CSP lets it through); providers without one show their initial.
      const logo = await page.waitForSelector('button[data-integration=logo-crm] img.logo');
      await page.waitForFunction((img) => (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth === 1, logo);
      expect(logos.hits).toBeGreaterThan(0);
      expect(await page.textContent('button[data-integration=alpha] .avatar')).toBe('P');
      expect(cspViolations).toEqual([]);

      // Its missing client credentials are the operator's problem (the Integration's Ready condition):
      // the end user is not shown it.
      expect(await page.$('button[data-integration=unfinished]')).toBeNull();
      expect(await page.textContent('#app')).not.toContain('Unfinished');

      // Ten integrations: a search field that filters by name.
      const search = page.locator('input[type=search]');
      await search.fill('char');
      const visible = () =>
        page.$$eval('ul.integrations li', (lis) =>
          lis.filter((li) => !(li as HTMLElement).hidden).map((li) => li.querySelector('button')!.dataset.integration),
        );
      expect(await visible()).toEqual(['charlie']);
      await search.fill('zzz');
      expect(await visible()).toEqual([]);
      expect(await page.isVisible('text=No integration matches')).toBe(true);
      await search.fill('');
      expect(await visible()).toHaveLength(all.length - 1);
      await page.click('button[data-integration=charlie]');
      await page.waitForSelector('text=Connect Charlie');
    }));

  it('has no search field with eight integrations or fewer, and a clear page for a session whose integrations cannot work', () =>
    inNewContext(async (context) => {
      const page = await context.newPage();
      await page.goto(
        `${bed.latchkey.url}/connect?session_token=${encodeURIComponent(session(NAMES.slice(0, 8).map((n) => n.toLowerCase())))}`,
      );
      await page.waitForSelector('ul.integrations');
      expect(await page.$$('ul.integrations li')).toHaveLength(8);
      expect(await page.$('input[type=search]')).toBeNull();

      const single = await context.newPage();
      await single.goto(`${bed.latchkey.url}/connect?session_token=${encodeURIComponent(session(['unfinished']))}`);
      const notReady = await single.waitForSelector('#app [role=alert]');
      expect(await notReady.textContent()).toContain('Not available yet');
      expect(await notReady.textContent()).toContain('not ready yet');
      expect(await single.$('ul.integrations')).toBeNull();
      expect(await single.$('form')).toBeNull();
    }));
});
