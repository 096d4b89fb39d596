/**
 * The screenshots of docs/dashboard.md and docs/connect-ui.md, taken as a user sees the product: a
 * server and a controller (integrations reconciled, so Ready), shipped catalog providers applied as
 * they ship (GitHub, Slack, HubSpot, Linear, OpenAI), connections imported through the REST API, and
 * a typed OpenAI key that could not be checked (the test's egress allows loopback only) as the failed
 * attempt in the log. Chromium writes them into docs/dashboard/ and docs/connect-ui/ when asked
 * (`npm run docs:screenshots`); otherwise into a temporary folder, so a test run leaves the tree clean.
 */
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, type TestEnvironment } from '../../dev/fixtures.js';
import { launchBrowser } from '../support/browser.js';
import { readCatalog } from '../support/catalog-files.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
const INTO_DOCS = process.env.LATCHKEY_WRITE_SCREENSHOTS === '1';
const shotsDir = (name: string) =>
  INTO_DOCS ? new URL(`../../../docs/${name}/`, import.meta.url).pathname : join(tmpdir(), `latchkey-screenshots-${process.pid}`, name) + '/';
const DASHBOARD_SHOTS = shotsDir('dashboard');
const CONNECT_SHOTS = shotsDir('connect-ui');
/** Shipped providers, applied under their own names as the chart installs them. */
const PROVIDERS = ['github', 'slack', 'hubspot', 'linear', 'openai'];
const OAUTH = ['github', 'slack', 'hubspot', 'linear'];
const CONFIG: Record<string, Record<string, string>> = {
  hubspot: { portalId: '20771984' },
  linear: { organizationId: '5a9c3e1e-8b7d-4f4e-9a51-2f1b0c8d7e6f' },
};

let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let replica: Replica;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  mkdirSync(DASHBOARD_SHOTS, { recursive: true });
  mkdirSync(CONNECT_SHOTS, { recursive: true });
  const catalog = readCatalog();
  for (const name of PROVIDERS) await applyProvider(kc, name, catalog.find((m) => m.metadata.name === name)!.spec);
  ns = await createTestNamespace(kc, 'screenshots');
  env = await createEnvironment(kc, ns.name, { mode: 'development', connectUI: { appName: 'Acme Notes' } });
  for (const name of OAUTH)
    await createIntegration(kc, ns.name, name, { provider: name }, { clientId: `acme-notes-${name}`, clientSecret: `acme-notes-secret-${name}-0123456789` });
  await createIntegration(kc, ns.name, 'openai', { provider: 'openai' });
  replica = await startReplica(kc, { namespaces: [ns.name], components: ['server', 'controller'], key: env.secretKey, selfBaseUrl: true });
  // Reconciled by the controller: every integration Ready.
  await eventually(
    () =>
      PROVIDERS.every((p) => replica.ctx.catalog.getIntegration(ns.name, p)?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True'),
    60_000,
  );
  await eventually(async () => (await replica.call('GET', '/providers')).status === 200);

  const users = ['ada@example.test', 'grace@example.test', 'linus@example.test', 'margaret@example.test'];
  let n = 0;
  for (const integration of OAUTH) {
    for (const email of users.slice(0, integration === 'slack' ? 4 : 2)) {
      n++;
      const res = await replica.call('POST', '/connections', {
        body: {
          provider_config_key: integration,
          connection_id: `${integration}-${email.split('@')[0]}`,
          end_user: { id: `user-${email.split('@')[0]}`, email },
          credentials: { type: 'OAUTH2', access_token: `token-${integration}-${n}-0123456789abcdef` },
          // What the post-connection steps would fetch from the provider (not reachable from the test).
          ...(CONFIG[integration] ? { connection_config: CONFIG[integration] } : {}),
        },
      });
      expect([integration, res.status, res.body]).toEqual([integration, 201, expect.anything()]);
    }
  }
  await eventually(() => replica.ctx.connectionScans.listConnections(ns.name).length === n);
  // An end user types an OpenAI key; the check cannot reach OpenAI from here: a failed attempt in the log.
  const session = await replica.call('POST', '/connect/sessions', {
    body: { end_user: { id: 'user-ada', email: 'ada@example.test' }, allowed_integrations: ['openai'] },
  });
  const form = await fetch(`${replica.url}/connect/api/forms`, {
    method: 'POST',
    headers: { authorization: `Bearer ${session.body.data.token as string}`, 'content-type': 'application/json' },
    body: JSON.stringify({ integration: 'openai', values: { apiKey: 'sk-proj-screenshot-0123456789abcdef' } }),
  });
  expect(form.status).toBe(502);
  await replica.ctx.oplog?.flush();
  browser = await launchBrowser();
}, 180_000);

afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close();
});

afterAll(async () => {
  await browser?.close();
  await replica?.stop();
  await ns?.delete();
});

async function page(viewport: { width: number; height: number }, options: { colorScheme?: 'dark' | 'light'; locale?: string } = {}) {
  const context = await browser.newContext({ viewport, ...options });
  contexts.push(context);
  return context.newPage();
}

async function loaded(p: Page, selector: string) {
  await p.waitForSelector(selector);
  // Logos are served by Latchkey; the shot waits until every image has its pixels.
  await p.waitForFunction(() => [...document.images].every((img) => img.complete));
}

describe('the dashboard', () => {
  const signedIn = async () => {
    const p = await page({ width: 1280, height: 800 });
    await p.goto(`${replica.url}/dashboard`);
    await p.waitForSelector('#sign-in');
    await p.screenshot({ path: `${DASHBOARD_SHOTS}sign-in.png`, fullPage: true });
    await p.fill('#secret-key', env.secretKey);
    await p.click('#sign-in button[type=submit]');
    await p.waitForSelector('h1:has-text("Connections")');
    return p;
  };

  it('shows the catalog integrations ready, their connections, one connection and the logs', async () => {
    const p = await signedIn();
    await p.goto(`${replica.url}/dashboard#/integrations`);
    await loaded(p, 'tr[data-integration=openai]');
    for (const name of PROVIDERS) expect(await p.textContent(`tr[data-integration=${name}]`)).toContain('ready');
    expect(await p.textContent('body')).not.toContain('not ready');
    await p.screenshot({ path: `${DASHBOARD_SHOTS}integrations.png`, fullPage: true });

    await p.goto(`${replica.url}/dashboard#/connections`);
    await loaded(p, 'tr[data-connection=slack-ada]');
    expect(await p.textContent('#total')).toBe('10 matching');
    await p.screenshot({ path: `${DASHBOARD_SHOTS}connections.png`, fullPage: true });

    await p.click('tr[data-connection=slack-ada] a');
    await p.waitForSelector('#connection-title');
    expect(await p.textContent('#credentials')).not.toContain('0123456789abcdef');
    await p.screenshot({ path: `${DASHBOARD_SHOTS}connection.png`, fullPage: true });

    await p.goto(`${replica.url}/dashboard#/logs`);
    await p.waitForSelector('tr.log-row');
    await p.screenshot({ path: `${DASHBOARD_SHOTS}logs.png`, fullPage: true });

    const failed = await replica.call('GET', '/logs?integration=openai&outcome=failure');
    const logId = failed.body.logs[0].id as string;
    await p.goto(`${replica.url}/dashboard#/logs/${logId}`);
    await p.waitForSelector('#log-entry');
    expect(await p.textContent('#log-entry')).toContain('could not check');
    expect(await p.textContent('#log-entry')).not.toContain('sk-proj-screenshot');
    await p.screenshot({ path: `${DASHBOARD_SHOTS}log-entry.png`, fullPage: true });
  });
});

describe('the Connect UI', () => {
  const VIEWPORT = { width: 480, height: 720 };
  const connectUrl = async (query: Record<string, string> = {}) => {
    const session = await replica.call('POST', '/connect/sessions', { body: { end_user: { id: 'user-new', email: 'new@example.test' } } });
    return `${replica.url}/connect?${new URLSearchParams({ session_token: session.body.data.token as string, ...query })}`;
  };

  it('lists the catalog integrations (light, dark, French), shows a form and an error page', async () => {
    const light = await page(VIEWPORT, { colorScheme: 'light', locale: 'en-US' });
    await light.goto(await connectUrl());
    await loaded(light, 'button[data-integration=github]');
    expect(await light.$$('ul.integrations li')).toHaveLength(PROVIDERS.length);
    await light.screenshot({ path: `${CONNECT_SHOTS}list.png` });

    await light.click('button[data-integration=openai]');
    await light.waitForSelector('form');
    expect(await light.textContent('header .muted')).toBe('Acme Notes wants access to your OpenAI account.');
    await light.screenshot({ path: `${CONNECT_SHOTS}form.png` });

    const dark = await page(VIEWPORT, { colorScheme: 'light', locale: 'en-US' });
    await dark.goto(await connectUrl({ theme: 'dark' }));
    await loaded(dark, 'button[data-integration=github]');
    await dark.screenshot({ path: `${CONNECT_SHOTS}list-dark.png` });

    const fr = await page(VIEWPORT, { colorScheme: 'light', locale: 'en-US' });
    await fr.goto(await connectUrl({ lang: 'fr' }));
    await loaded(fr, 'button[data-integration=github]');
    expect(await fr.getAttribute('html', 'lang')).toBe('fr');
    await fr.screenshot({ path: `${CONNECT_SHOTS}list-fr.png` });

    const error = await page(VIEWPORT, { colorScheme: 'light', locale: 'en-US' });
    const res = await error.goto(`${replica.url}/oauth/callback?state=not-a-flow&code=x`);
    expect(res?.status()).toBe(400);
    await error.waitForSelector('.card.error[role=alert]');
    await error.screenshot({ path: `${CONNECT_SHOTS}error.png` });
  });
});
