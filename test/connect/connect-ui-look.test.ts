/**
 * The Connect UI as an end user meets it, in chromium at 480×720: each language (the SDK's `lang`,
 * then Accept-Language, then English), each theme, the application's name, logo and brand colour,
 * the Provider's help under a field, shipped logos served by Latchkey, and the keyboard-only path.
 * axe-core runs on every page of the flow (list, form, the OAuth sign-in popup's page, success,
 * error, not-ready) and fails the test on any serious or critical violation (the screenshots in
 * docs/connect-ui.md are taken by test/docs/screenshots.test.ts). Also: what the API server accepts in the
 * Provider's `fieldHelp` and the Environment's `connectUI` look (CEL rules and patterns).
 */
import AxeBuilder from '@axe-core/playwright';
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { contrast } from '../../src/domain/colour-contrast.js';
import { apiMessage, statusOf } from '../../src/k8s/errors.js';
import { GROUP, VERSION } from '../../src/k8s/resources.js';
import { customObject } from '../support/kube.js';
import { startOidcServer, type OidcTestServer } from '../../dev/peers/oidc-server.js';
import { startConnectBed, type ConnectBed } from '../support/connect-bed.js';
import { sealSession } from '../support/fixtures.js';

const kc = testKubeConfig();
// WakaTime has a shipped logo (simple-icons); no other test file uses the name.
const P = {
  logo: 'wakatime',
  basic: `look-basic-${process.pid}`,
  plain: `look-plain-${process.pid}`,
  oauth: `look-oauth-${process.pid}`,
  idp: `look-idp-${process.pid}`,
};
const CLIENT = { clientId: 'latchkey-look-test', clientSecret: 'look-test-secret-value-0123456789' };
const PLAIN = ['Atlas', 'Beacon', 'Cobalt', 'Dune', 'Ember', 'Fjord', 'Garnet', 'Harbor'];
const VIEWPORT = { width: 480, height: 720 };
const DOCS_URL = 'https://wakatime.com/settings/api-key';

let bed: ConnectBed;
let oidc: OidcTestServer;

beforeAll(async () => {
  bed = await startConnectBed(kc, 'connect-look', 'development');
  await applyProvider(kc, P.logo, {
    displayName: 'WakaTime',
    authMode: 'API_KEY',
    categories: ['productivity'],
    fieldHelp: {
      apiKey: {
        description: 'Your secret API key, in your WakaTime settings.',
        example: 'waka_0f3c…',
        docsUrl: DOCS_URL,
        labels: { fr: 'Clé API secrète' },
        descriptions: { fr: 'Votre clé API secrète, dans vos réglages WakaTime.' },
      },
    },
  });
  await applyProvider(kc, P.basic, { displayName: 'Time Ledger', authMode: 'BASIC' });
  await applyProvider(kc, P.plain, { displayName: 'Plain CRM', authMode: 'API_KEY', categories: ['crm'] });
  await applyProvider(kc, P.oauth, {
    displayName: 'Unfinished OAuth',
    authMode: 'OAUTH2',
    authorizationUrl: 'https://auth.example.test/authorize',
    tokenUrl: 'https://auth.example.test/token',
  });
  await createIntegration(kc, bed.ns.name, 'wakatime', { provider: P.logo });
  await createIntegration(kc, bed.ns.name, 'ledger', { provider: P.basic });
  for (const n of PLAIN) await createIntegration(kc, bed.ns.name, n.toLowerCase(), { provider: P.plain, displayName: n });
  oidc = await startOidcServer({ clients: [{ ...CLIENT, redirectUris: [`${bed.latchkey.url}/oauth/callback`] }] });
  await applyProvider(kc, P.idp, {
    displayName: 'Acme Identity',
    authMode: 'OAUTH2',
    authorizationUrl: oidc.authorizationUrl,
    tokenUrl: oidc.tokenUrl,
    defaultScopes: ['openid'],
  });
  await createIntegration(kc, bed.ns.name, 'idp', { provider: P.idp, authorizationParams: { prompt: 'consent' } }, CLIENT);
  // No client Secret: it cannot work, and is the operator's to fix.
  await createIntegration(kc, bed.ns.name, 'unfinished', { provider: P.oauth });
  await bed.synced(
    (store) =>
      store.catalog.getProvider(P.logo)?.spec.fieldHelp &&
      store.catalog.getProvider(P.basic) &&
      store.catalog.getProvider(P.oauth) &&
      store.catalog.getProvider(P.idp) &&
      store.catalog.readSecretValue(bed.ns.name, 'idp-client', 'clientId') &&
      ['wakatime', 'ledger', 'unfinished', ...PLAIN.map((n) => n.toLowerCase())].every((i) => store.catalog.getIntegration(bed.ns.name, i)),
  );
});

afterAll(async () => {
  await bed?.close();
  await oidc?.close();
  for (const p of Object.values(P)) await deleteProvider(kc, p);
});

const ALL = ['wakatime', 'ledger', ...PLAIN.map((n) => n.toLowerCase()), 'unfinished'];

function session(allowedIntegrations: string[] = ALL): string {
  return sealSession(bed.env.secretKey, { namespace: bed.ns.name, endUser: { id: 'look' }, allowedIntegrations });
}

function connectUrl(query: Record<string, string> = {}, integrations?: string[]): string {
  return `${bed.latchkey.url}/connect?${new URLSearchParams({ session_token: session(integrations), ...query })}`;
}

/** A fresh chromium context at the size; `run` gets a page in it. */
async function withPage<T>(run: (page: Page) => Promise<T>, options: BrowserContextOptions = {}): Promise<T> {
  const context = await bed.browser.newContext({ viewport: VIEWPORT, ...options });
  try {
    return await run(await context.newPage());
  } finally {
    await context.close();
  }
}

/** axe-core on the page as it is: no serious or critical violation. */
async function expectAccessible(page: Page, what: string): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const bad = violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${what}: ${v.id} (${v.impact}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect(bad).toEqual([]);
}

const bodyBackground = (page: Page) => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
const LIGHT_BG = 'rgb(245, 246, 248)';
const DARK_BG = 'rgb(20, 23, 28)';

/** `rgb(r, g, b)` as six hex digits. */
function hexOf(rgb: string): string {
  const [r, g, b] = rgb.match(/\d+/g)!.map(Number);
  return [r, g, b].map((c) => c!.toString(16).padStart(2, '0')).join('');
}

describe('the Connect UI in the end user’s language', () => {
  const TITLES = {
    en: ['Connect an account', 'Productivity'],
    fr: ['Connecter un compte', 'Productivité'],
    de: ['Konto verbinden', 'Produktivität'],
    es: ['Conectar una cuenta', 'Productividad'],
    pt: ['Conectar uma conta', 'Produtividade'],
  } as const;

  it.each(Object.entries(TITLES))('shows the list in %s when the SDK asks for it, and passes axe', async (lang, [title, category]) => {
    await withPage(
      async (page) => {
        // The browser prefers another language: the SDK's lang wins.
        await page.goto(connectUrl({ lang }));
        await page.waitForSelector('ul.integrations');
        expect(await page.getAttribute('html', 'lang')).toBe(lang);
        expect(await page.textContent('h1')).toBe(title);
        // The subtitle is the category, not the name again.
        expect(await page.textContent('button[data-integration=wakatime] .names .muted')).toBe(category);
        await expectAccessible(page, `list (${lang})`);
      },
      { locale: 'ja-JP' },
    );
  });

  it('falls back to the browser’s Accept-Language, then English', async () => {
    await withPage(
      async (page) => {
        await page.goto(connectUrl());
        await page.waitForSelector('ul.integrations');
        expect(await page.textContent('h1')).toBe('Konto verbinden');
      },
      { locale: 'de-DE' },
    );
    await withPage(
      async (page) => {
        // A language we do not have, from the SDK and from the browser: English.
        await page.goto(connectUrl({ lang: 'xx' }));
        await page.waitForSelector('ul.integrations');
        expect(await page.getAttribute('html', 'lang')).toBe('en');
        expect(await page.textContent('h1')).toBe('Connect an account');
      },
      { locale: 'ja-JP' },
    );
  });

  it('shows the Provider’s per-language label and help, and translates Latchkey’s own labels only', async () => {
    await withPage(async (page) => {
      await page.goto(connectUrl({ lang: 'fr' }));
      await page.click('button[data-integration=wakatime]');
      await page.waitForSelector('form');
      expect(await page.textContent('label[for=f-values-apiKey]')).toBe('Clé API secrète');
      expect(await page.textContent('#f-values-apiKey-help')).toContain('Votre clé API secrète');
      expect(await page.textContent('#f-values-apiKey-help a')).toContain('Où le trouver');
      await expectAccessible(page, 'form (fr)');
      await page.click('button.link');
      await page.click('button[data-integration=ledger]');
      await page.waitForSelector('form');
      expect(await page.textContent('label[for=f-values-username]')).toBe('Nom d’utilisateur');
      expect(await page.textContent('label[for=f-values-password]')).toBe('Mot de passe');
    });
  });
});

describe('themes', () => {
  it.each([
    ['light', 'dark', LIGHT_BG],
    ['dark', 'light', DARK_BG],
    ['system', 'dark', DARK_BG],
    ['system', 'light', LIGHT_BG],
  ] as const)('theme=%s with the system in %s mode shows the page in its colours and passes axe', async (theme, scheme, background) => {
    await withPage(
      async (page) => {
        await page.goto(connectUrl({ theme }));
        await page.waitForSelector('ul.integrations');
        expect(await page.getAttribute('html', 'data-theme')).toBe(theme);
        expect(await bodyBackground(page)).toBe(background);
        await expectAccessible(page, `list (${theme}, ${scheme})`);
        if (theme === 'dark') {
          await page.click('button[data-integration=wakatime]');
          await page.waitForSelector('form');
          await expectAccessible(page, 'form (dark)');
        }
      },
      { colorScheme: scheme },
    );
  });
});

describe('list, form with help, success, and the keyboard alone', () => {
  it('lists shipped logos served by Latchkey (no third-party request), leaves out what cannot work, and has a search', async () => {
    await withPage(async (page) => {
      const elsewhere: string[] = [];
      page.on('request', (r) => {
        if (!r.url().startsWith(bed.latchkey.url)) elsewhere.push(r.url());
      });
      await page.goto(connectUrl());
      const logo = await page.waitForSelector('button[data-integration=wakatime] img.logo');
      expect(await logo.getAttribute('src')).toBe(`${bed.latchkey.url}/connect/logos/wakatime.svg`);
      await page.waitForFunction((img) => (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth > 0, logo);
      // No shipped logo: the initial.
      expect(await page.textContent('button[data-integration=ledger] .avatar')).toBe('T');
      expect(await page.$('button[data-integration=unfinished]')).toBeNull();
      expect(await page.$$('ul.integrations li')).toHaveLength(ALL.length - 1);
      expect(await page.$('input[type=search]')).not.toBeNull();
      expect(elsewhere).toEqual([]);
      await expectAccessible(page, 'list');
    });
  });

  it('points GET /providers’ logo_url and GET /integrations’ logo at the shipped logo', async () => {
    const rest = async (path: string) =>
      (await (await fetch(`${bed.latchkey.url}${path}`, { headers: { authorization: `Bearer ${bed.env.secretKey}` } })).json()) as {
        data: Record<string, unknown>;
      };
    const logo = `${bed.latchkey.url}/connect/logos/wakatime.svg`;
    expect((await rest('/providers/wakatime')).data.logo_url).toBe(logo);
    expect((await rest(`/providers/${P.basic}`)).data).not.toHaveProperty('logo_url');
    expect((await rest('/integrations/wakatime')).data.logo).toBe(logo);
    expect((await rest('/integrations/ledger')).data).not.toHaveProperty('logo');
  });

  it('serves a shipped logo as an inert SVG, and a clear 404 for anything else', async () => {
    const res = await fetch(`${bed.latchkey.url}/connect/logos/wakatime.svg`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'");
    expect(await res.text()).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"[^]*<path [^]*<\/svg>$/);
    for (const path of [
      'openai.svg',
      'wakatime.png',
      '..%2F..%2Fpackage.json',
      '%2e%2e%2fwakatime.svg',
      'WakaTime.svg',
      '__proto__.svg',
      'x'.repeat(300) + '.svg',
    ]) {
      const miss = await fetch(`${bed.latchkey.url}/connect/logos/${path}`);
      expect([path, miss.status]).toEqual([path, 404]);
      expect(((await miss.json()) as { error: { code: string } }).error.code).toBe('not_found');
    }
  });

  it('goes from the list through the form to success with the keyboard alone, with help and errors announced', async () => {
    await withPage(async (page) => {
      await page.goto(connectUrl());
      await page.waitForSelector('ul.integrations');
      // Tab to WakaTime, Enter.
      for (let i = 0; i < 20; i++) {
        await page.keyboard.press('Tab');
        if (await page.evaluate(() => document.activeElement?.getAttribute('data-integration') === 'wakatime')) break;
      }
      await page.keyboard.press('Enter');
      await page.waitForSelector('form');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('f-values-apiKey');

      // The help: description, example, and the provider's page in a new tab, read with the field.
      const input = page.locator('#f-values-apiKey');
      expect(await input.getAttribute('placeholder')).toBe('For example: waka_0f3c…');
      expect(await input.getAttribute('aria-describedby')).toBe('f-values-apiKey-help f-values-apiKey-error');
      expect(await page.textContent('#f-values-apiKey-help')).toContain('Your secret API key, in your WakaTime settings.');
      const link = page.locator('#f-values-apiKey-help a');
      expect(await link.getAttribute('href')).toBe(DOCS_URL);
      expect(await link.getAttribute('target')).toBe('_blank');
      expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
      expect(await link.textContent()).toBe('How to find it (opens in a new tab)');
      await expectAccessible(page, 'form');

      // Back to the list and in again, by keyboard: Shift+Tab from the field reaches the back link.
      await page.keyboard.press('Shift+Tab');
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('← All integrations');
      await page.keyboard.press('Enter');
      await page.waitForSelector('ul.integrations');
      expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('H1');
      await page.focus('button[data-integration=wakatime]');
      await page.keyboard.press('Enter');
      await page.waitForSelector('form');

      // Sent empty: the field says why, is marked invalid and keeps the focus (read with its error).
      await page.keyboard.press('Enter');
      expect(await page.textContent('#f-values-apiKey-error')).toBe('Required');
      expect(await input.getAttribute('aria-invalid')).toBe('true');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('f-values-apiKey');
      await expectAccessible(page, 'form with an error');

      await page.keyboard.type('waka_test_key_123');
      await page.keyboard.press('Enter');
      const done = await page.waitForSelector('.card.success[role=status]');
      expect(await done.textContent()).toContain('WakaTime is connected');
      await expectAccessible(page, 'success');
    });
  });
});

describe('pages outside the list', () => {
  it('the OAuth sign-in popup’s page, the callback’s error page and the not-ready page pass axe', async () => {
    await withPage(async (page) => {
      await page.goto(`${bed.latchkey.url}/connect/redirect?lang=de&theme=dark`);
      expect(await page.getAttribute('html', 'lang')).toBe('de');
      await expectAccessible(page, 'sign-in popup page');

      const res = await page.goto(`${bed.latchkey.url}/oauth/callback?state=not-a-flow&code=x`);
      expect(res?.status()).toBe(400);
      const alert = await page.waitForSelector('.card.error[role=alert]');
      expect(await alert.textContent()).toContain('Could not connect');
      await expectAccessible(page, 'callback error');

      await page.goto(connectUrl({}, ['unfinished']));
      const notReady = await page.waitForSelector('#app [role=alert]');
      expect(await notReady.textContent()).toContain('Not available yet');
      await expectAccessible(page, 'not ready');
    });
  });

  it('the OAuth callback’s success page keeps the language and theme the flow started in, and passes axe', async () => {
    await withPage(
      async (page) => {
        // One integration: straight to the provider.
        await page.goto(connectUrl({ lang: 'es', theme: 'dark' }, ['idp']));
        await page.waitForURL((u) => u.href.startsWith(oidc.issuer), { timeout: 20_000 });
        await page.fill('input[name=login]', 'ana');
        await page.fill('input[name=password]', 'any-password');
        await page.click('button[type=submit]');
        await page.click('text=Continue');
        const done = await page.waitForSelector('.card.success[role=status]', { timeout: 20_000 });
        expect(page.url()).toMatch(new RegExp(`^${bed.latchkey.url}/oauth/callback`));
        expect(await done.textContent()).toContain('está conectado');
        expect(await page.getAttribute('html', 'lang')).toBe('es');
        expect(await page.getAttribute('html', 'data-theme')).toBe('dark');
        expect(await bodyBackground(page)).toBe(DARK_BG);
        await expectAccessible(page, 'OAuth callback success');
      },
      // The browser says otherwise: the flow's choice wins.
      { locale: 'de-DE', colorScheme: 'light' },
    );
  });

  it('the callback’s error page is in the browser’s language, its message too', async () => {
    await withPage(
      async (page) => {
        await page.goto(`${bed.latchkey.url}/oauth/callback?state=not-a-flow&code=x`);
        expect(await page.textContent('h1')).toBe('Connexion impossible');
        // The end user's message too (the code stays as the server gave it).
        expect(await page.textContent('.card.error')).toContain('Cette réponse d’autorisation n’est pas valide.');
        expect(await page.textContent('.card.error .code')).toMatch(/^Code d’erreur : invalid_/);
      },
      { locale: 'fr-FR' },
    );
  });
});

describe('the application’s branding', () => {
  it('shows the application’s name and logo, and its brand colour made readable in each theme', async () => {
    const custom = kc.makeApiClient(CustomObjectsApi);
    const current = (await custom.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: bed.ns.name,
      plural: 'environments',
      name: bed.env.name,
    })) as { spec: Record<string, unknown> };
    // Yellow: too light for white text or for links on a white card.
    const brand = 'ffd600';
    await custom.replaceNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: bed.ns.name,
      plural: 'environments',
      name: bed.env.name,
      body: {
        ...current,
        spec: {
          ...current.spec,
          connectUI: {
            appName: 'Acme',
            appLogoUrl: `${bed.latchkey.url}/connect/logos/wakatime.svg`,
            brandColor: `#${brand.toUpperCase()}`,
          },
        },
      },
    });
    await bed.synced((store) => store.catalog.listEnvironments(bed.ns.name)[0]?.spec.connectUI?.brandColor);

    for (const theme of ['light', 'dark'] as const) {
      await withPage(async (page) => {
        await page.goto(connectUrl({ theme }));
        await page.waitForSelector('ul.integrations');
        expect(await page.textContent('header .app')).toBe('Acme');
        expect(await page.textContent('header .muted')).toBe('Acme asks you to connect one of these services.');
        await page.click('button[data-integration=wakatime]');
        await page.waitForSelector('form');
        expect(await page.textContent('header .muted')).toBe('Acme wants access to your WakaTime account.');
        const button = page.locator('button.primary');
        const background = hexOf(await button.evaluate((b) => getComputedStyle(b).backgroundColor));
        const text = hexOf(await button.evaluate((b) => getComputedStyle(b).color));
        const card = hexOf(await page.locator('.card').evaluate((c) => getComputedStyle(c).backgroundColor));
        // The brand colour, adjusted: readable as a link on the card, and its button text readable on it.
        if (theme === 'light') expect(background).not.toBe(brand);
        expect(contrast(background, card)).toBeGreaterThanOrEqual(4.5);
        expect(contrast(text, background)).toBeGreaterThanOrEqual(4.5);
        await expectAccessible(page, `branded form (${theme})`);
      });
    }
  });
});

describe('what the CRDs accept for the look', () => {
  const custom = () => kc.makeApiClient(CustomObjectsApi);
  /** A dry-run create: the status and message the API server answers (undefined status: accepted). */
  async function refusal(create: () => Promise<unknown>): Promise<{ status?: number; message: string }> {
    try {
      await create();
      return { message: '' };
    } catch (err) {
      return { status: statusOf(err), message: apiMessage(err) };
    }
  }
  const environment = (connectUI: Record<string, unknown>) =>
    refusal(() =>
      custom().createNamespacedCustomObject({
        ...customObject(bed.ns.name, 'environments', {
          kind: 'Environment',
          metadata: { name: 'look-check' },
          spec: { secretRef: { name: 'x' }, connectUI },
        }),
        dryRun: 'All',
      }),
    );
  const provider = (fieldHelp: Record<string, unknown>) =>
    refusal(() =>
      custom().createClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: 'providers',
        dryRun: 'All',
        body: {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: 'Provider',
          metadata: { name: `look-check-${process.pid}` },
          spec: { displayName: 'Check', authMode: 'API_KEY', fieldHelp },
        },
      }),
    );

  it('accepts an application name, an https logo and a #RRGGBB brand colour; refuses anything else', async () => {
    expect(await environment({ appName: 'Acme', appLogoUrl: 'https://acme.example.com/logo.svg', brandColor: '#FF5A1f' })).toEqual({
      message: '',
    });
    for (const [connectUI, says] of [
      [{ brandColor: 'red' }, 'brandColor'],
      [{ brandColor: '#ff5a1f; background:url(x)' }, 'brandColor'],
      [{ appLogoUrl: 'javascript:alert(1)' }, 'appLogoUrl must be an https URL'],
      [{ appLogoUrl: 'http://acme.example.com/logo.svg' }, 'appLogoUrl must be an https URL'],
      [{ appName: 'x'.repeat(65) }, 'appName'],
    ] as const) {
      const r = await environment(connectUI);
      expect([r.status, r.message]).toEqual([422, expect.stringContaining(says)]);
    }
  });

  it('accepts field help with an https docs page and per-language labels; refuses other pages and languages', async () => {
    expect(
      await provider({
        apiKey: { description: 'd', example: 'e', docsUrl: 'https://example.com/keys', labels: { fr: 'Clé' }, descriptions: { de: 'x' } },
      }),
    ).toEqual({ message: '' });
    for (const [help, says] of [
      [{ apiKey: { docsUrl: 'http://example.com/keys' } }, 'docsUrl must be an https URL'],
      [{ apiKey: { docsUrl: 'javascript:alert(1)' } }, 'docsUrl must be an https URL'],
      [{ apiKey: { labels: { xx: 'label' } } }, 'languages are en, fr, de, es and pt'],
      [{ apiKey: { descriptions: { 'fr-FR': 'x' } } }, 'languages are en, fr, de, es and pt'],
    ] as const) {
      const r = await provider(help);
      expect([r.status, r.message]).toEqual([422, expect.stringContaining(says)]);
    }
  });
});
