/**
 * Secrets in real log lines, Connect flows (#17): the Connect bed's replica (server + webhook
 * dispatcher) logs at `debug` into memory while chromium runs the OAuth 2 flow against oidc-provider
 * (PKCE, a success, a token endpoint failing with 500 at the callback, a replayed callback) and the
 * OAuth 1.0a flow against the oauthlib server (a success, a replayed callback, a forged verifier).
 * The test learns every secret that crosses a wire: query values the browser sends and receives
 * (authorization code, state, session token, OAuth 1 request token and verifier), the binding cookie,
 * and what goes through a recording proxy in front of the token endpoints (PKCE verifier, client
 * secret, access, refresh and ID tokens, OAuth 1 token secrets). No line may hold one of them.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { startOidcServer, type OidcTestServer } from '../../dev/peers/oidc-server.js';
import { openConnectPopup, waitForEvent } from '../support/browser.js';
import { startConnectBed, type ConnectBed } from '../support/connect-bed.js';
import { startHttpFaultProxy, type HttpFaultProxy } from '../support/faults/http-fault-proxy.js';
import { sealSession } from '../support/fixtures.js';
import { captureLogs, type LogCapture } from '../support/log-capture.js';
import { startOAuth1Server, type OAuth1TestServer } from '../support/servers/oauth1-server.js';

const kc = testKubeConfig();
const OAUTH2 = `logscan-connect-oidc-${process.pid}`;
const OAUTH1 = `logscan-connect-oauth1-${process.pid}`;
const CLIENT = { clientId: 'latchkey-logscan-connect', clientSecret: 'logscan-connect-client-secret-5f2a9c' };
const CONSUMER = { clientId: 'consumer_key_logscan_connect', clientSecret: 'logscan-consumer-secret-81d3e7' };
/** Query, form and JSON keys whose values are secrets wherever they appear. */
const SECRET_KEYS = new Set([
  'code',
  'state',
  'session_token',
  'code_verifier',
  'client_secret',
  'access_token',
  'refresh_token',
  'id_token',
  'oauth_token',
  'oauth_token_secret',
  'oauth_verifier',
]);

let bed: ConnectBed;
let logs: LogCapture;
let oidc: OidcTestServer;
let oauth1: OAuth1TestServer;
let oidcTokens: HttpFaultProxy;
let oauth1Tokens: HttpFaultProxy;
const secrets = new Set<string>();

beforeAll(async () => {
  logs = captureLogs();
  bed = await startConnectBed(kc, 'logscan-connect', 'development', { logger: logs.logger });
  const callback = `${bed.latchkey.url}/oauth/callback`;
  [oidc, oauth1] = await Promise.all([
    startOidcServer({ clients: [{ ...CLIENT, redirectUris: [callback] }] }),
    startOAuth1Server(CONSUMER.clientId, CONSUMER.clientSecret),
  ]);
  // The token endpoints behind recording proxies: what Latchkey sends and gets back there is known here.
  [oidcTokens, oauth1Tokens] = await Promise.all([startHttpFaultProxy(oidc.issuer), startHttpFaultProxy(oauth1.url, { keepHost: true })]);
  oidcTokens.recordBodies = true;
  oauth1Tokens.recordBodies = true;
  await applyProvider(kc, OAUTH2, {
    displayName: 'Log scan OIDC',
    authMode: 'OAUTH2',
    authorizationUrl: oidc.authorizationUrl,
    tokenUrl: `${oidcTokens.url}${new URL(oidc.tokenUrl).pathname}`,
    defaultScopes: ['openid'],
  });
  await applyProvider(kc, OAUTH1, {
    displayName: 'Log scan OAuth 1',
    authMode: 'OAUTH1',
    requestTokenUrl: `${oauth1Tokens.url}/request_token`,
    authorizationUrl: `${oauth1.url}/authorize`,
    tokenUrl: `${oauth1Tokens.url}/access_token`,
  });
  await createIntegration(
    kc,
    bed.ns.name,
    'oidc',
    { provider: OAUTH2, scopes: ['openid', 'offline_access'], authorizationParams: { prompt: 'consent' } },
    CLIENT,
  );
  await createIntegration(kc, bed.ns.name, 'oauth1', { provider: OAUTH1 }, CONSUMER);
  await bed.synced(
    (store) =>
      store.getProvider(OAUTH2) &&
      store.getProvider(OAUTH1) &&
      store.readSecretValue(bed.ns.name, 'oidc-client', 'clientSecret') &&
      store.readSecretValue(bed.ns.name, 'oauth1-client', 'clientSecret'),
  );
  for (const s of [bed.env.secretKey, bed.env.webhookSigningKey, CLIENT.clientSecret, CONSUMER.clientSecret]) secrets.add(s);
}, 180_000);

afterAll(async () => {
  await Promise.all([oidcTokens?.close(), oauth1Tokens?.close(), oidc?.close(), oauth1?.close()]);
  await Promise.all([deleteProvider(kc, OAUTH2), deleteProvider(kc, OAUTH1)]);
  await bed?.close();
});

/** Adds the values of secret keys found in a URL's query, a form body or a JSON body. */
function learnFrom(text: string | undefined): void {
  if (!text) return;
  const add = (k: string, v: unknown) => {
    if (SECRET_KEYS.has(k) && typeof v === 'string' && v.length >= 8) secrets.add(v);
  };
  try {
    const json = JSON.parse(text) as Record<string, unknown>;
    if (json && typeof json === 'object') for (const [k, v] of Object.entries(json)) add(k, v);
    return;
  } catch {
    // a URL or a form
  }
  const query = text.includes('?') ? text.slice(text.indexOf('?') + 1) : text;
  for (const [k, v] of new URLSearchParams(query.split('#')[0])) add(k, v);
}

/** Learns from every URL the browser asks for (and every redirect it follows) and the cookies it holds for Latchkey. */
function watchBrowser(context: BrowserContext): () => Promise<void> {
  context.on('request', (r) => {
    learnFrom(r.url());
    learnFrom(r.postData() ?? undefined);
  });
  return async () => {
    for (const c of await context.cookies(bed.latchkey.url)) if (c.value.length >= 8) secrets.add(c.value);
  };
}

async function loginAndConsent(popup: Page, login: string): Promise<void> {
  await popup.waitForURL((u) => u.href.startsWith(oidc.issuer), { timeout: 20_000 });
  await popup.fill('input[name=login]', login);
  await popup.fill('input[name=password]', 'any-password');
  await popup.click('button[type=submit]');
  await popup.waitForSelector('text=Continue');
}

function session(integration: string, user: string): string {
  const token = sealSession(bed.env.secretKey, { namespace: bed.ns.name, endUser: { id: user }, allowedIntegrations: [integration] });
  secrets.add(token);
  return token;
}

/** The callback URL the popup is sent to (with the code or verifier and the state). */
function callbackOf(popup: Page): Promise<string> {
  return new Promise((resolve) =>
    popup.on('request', (r) => {
      if (r.url().startsWith(`${bed.latchkey.url}/oauth/callback`)) resolve(r.url());
    }),
  );
}

describe('secrets in real debug log lines of the Connect flows', () => {
  it('runs OAuth 2 (PKCE) and OAuth 1.0a flows with failures in chromium, and no secret appears in any line', async () => {
    const context = await bed.browser.newContext();
    const learnCookies = watchBrowser(context);
    try {
      // OAuth 2: a success.
      const first = await openConnectPopup(context, bed.app.url, session('oidc', 'scan-user-1'));
      const firstCallback = callbackOf(first.popup);
      await loginAndConsent(first.popup, 'alice');
      await first.popup.click('text=Continue');
      const connected = await waitForEvent(first.app, 'connect');
      const stored = await eventually(() => bed.latchkey.ctx.store.getConnection(bed.ns.name, 'oidc', connected.connectionId!));
      learnFrom(JSON.stringify(stored.credentials));
      // The same callback again (replayed): refused.
      expect((await context.request.get(await firstCallback)).status()).toBe(400);

      // OAuth 2: the token endpoint fails (500) at the callback.
      const second = await openConnectPopup(context, bed.app.url, session('oidc', 'scan-user-2'));
      await loginAndConsent(second.popup, 'bob');
      oidc.failNext(1, 500);
      await second.popup.click('text=Continue');
      expect((await waitForEvent(second.app, 'error')).error?.code).toBeTruthy();

      // OAuth 1.0a: a success.
      const third = await openConnectPopup(context, bed.app.url, session('oauth1', 'scan-user-3'));
      const thirdCallback = callbackOf(third.popup);
      await third.popup.waitForURL((u) => u.href.startsWith(`${oauth1.url}/authorize`));
      await third.popup.click('button[value=approve]');
      const connected1 = await waitForEvent(third.app, 'connect');
      const stored1 = await eventually(() => bed.latchkey.ctx.store.getConnection(bed.ns.name, 'oauth1', connected1.connectionId!));
      learnFrom(JSON.stringify(stored1.credentials));
      expect((await context.request.get(await thirdCallback)).status()).toBe(400);

      // OAuth 1.0a: a forged verifier at the callback (the provider refuses the access-token call).
      const fourth = await openConnectPopup(context, bed.app.url, session('oauth1', 'scan-user-4'));
      // The approval's redirect to the callback is rewritten on its way to the browser.
      await fourth.popup.route(`${oauth1.url}/authorize`, async (route) => {
        if (route.request().method() !== 'POST') return route.continue();
        const answer = await route.fetch({ maxRedirects: 0 });
        const location = new URL(answer.headers().location!);
        learnFrom(location.toString());
        location.searchParams.set('oauth_verifier', 'forged-verifier-0123456789');
        await route.fulfill({ status: 302, headers: { location: location.toString() } });
      });
      await fourth.popup.waitForURL((u) => u.href.startsWith(`${oauth1.url}/authorize`));
      await fourth.popup.click('button[value=approve]');
      expect((await waitForEvent(fourth.app, 'error')).error?.code).toBeTruthy();
      await learnCookies();
    } finally {
      await context.close();
    }
    for (const seen of [...oidcTokens.seen, ...oauth1Tokens.seen]) {
      learnFrom(seen.requestBody);
      learnFrom(seen.responseBody);
    }

    // What the scan knows: each kind of secret was really seen on a wire (else the scan proves less than it says).
    const tokenForms = oidcTokens.seen.map((s) => new URLSearchParams(s.requestBody ?? ''));
    expect(tokenForms.some((f) => f.get('code_verifier') && f.get('code'))).toBe(true);
    expect(
      oauth1Tokens.seen.filter((s) => s.path.startsWith('/request_token') && s.responseBody?.includes('oauth_token_secret')),
    ).not.toHaveLength(0);
    expect(oauth1Tokens.seen.filter((s) => s.path.startsWith('/access_token'))).toHaveLength(2);
    expect(secrets.size).toBeGreaterThan(15);

    expect(logs.lines.some((l) => l.includes('"level":20'))).toBe(true);
    const leaks = logs.leaks(secrets);
    expect(leaks.map((l) => `${l.secret.slice(0, 6)}… in ${l.line.slice(0, 400)}`)).toEqual([]);
  }, 240_000);
});
