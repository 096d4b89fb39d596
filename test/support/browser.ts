/** Debian's headless chromium through playwright-core, and the application page's Connect UI events. */
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** `extraArgs`: more flags (simulated providers: their host resolver rules and the test CA's key). */
export async function launchBrowser(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...CHROMIUM_ARGS, ...extraArgs] });
}

/** Opens the application page, sets the session token and clicks "Connect"; returns the popup. */
export async function openConnectPopup(context: BrowserContext, appUrl: string, sessionToken: string): Promise<{ app: Page; popup: Page }> {
  const app = await context.newPage();
  await app.goto(appUrl);
  await app.waitForFunction(() => (window as unknown as { clientReady?: boolean }).clientReady === true);
  await app.evaluate((t) => {
    (window as unknown as { sessionToken: string }).sessionToken = t;
  }, sessionToken);
  const [popup] = await Promise.all([context.waitForEvent('page'), app.click('#open')]);
  return { app, popup };
}

export type ClientEvent = { type: string; providerConfigKey?: string; connectionId?: string; error?: { code: string; message: string } };

export async function eventsOf(app: Page): Promise<ClientEvent[]> {
  return app.evaluate(() => (window as unknown as { latchkeyEvents: ClientEvent[] }).latchkeyEvents);
}

export async function waitForEvent(app: Page, type: string, timeoutMs = 20_000): Promise<ClientEvent> {
  await app.waitForFunction(
    (t) => (window as unknown as { latchkeyEvents: Array<{ type: string }> }).latchkeyEvents.some((e) => e.type === t),
    type,
    { timeout: timeoutMs },
  );
  return (await eventsOf(app)).find((e) => e.type === type)!;
}

/** The first `connect` or `error` event of the application page. */
export async function firstOutcome(app: Page, timeoutMs = 30_000): Promise<ClientEvent> {
  await app.waitForFunction(
    () =>
      (window as unknown as { latchkeyEvents: Array<{ type: string }> }).latchkeyEvents.some(
        (e) => e.type === 'connect' || e.type === 'error',
      ),
    undefined,
    { timeout: timeoutMs },
  );
  return (await eventsOf(app)).find((e) => e.type === 'connect' || e.type === 'error')!;
}

/** In a page at the test's oidc-provider (`issuer`): signs in as `login` (any password) and stops at the consent page. */
export async function loginAndConsent(page: Page, issuer: string, login: string): Promise<void> {
  await page.waitForURL((u) => u.href.startsWith(issuer), { timeout: 20_000 });
  await page.fill('input[name=login]', login);
  await page.fill('input[name=password]', 'any-password');
  await page.click('button[type=submit]');
  await page.waitForSelector('text=Continue');
}
