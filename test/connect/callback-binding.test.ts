/**
 * The OAuth callback in chromium against oidc-provider: bound to the browser that started the flow
 * (login CSRF / connection fixation), and reached through an Environment's custom callback URL (a
 * separate loopback server answering 308), with the provider answering by GET and by form_post.
 */
import { createServer, type Server } from 'node:http';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../src/k8s/resources.js';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { startOidcServer, type OidcTestServer } from '../../dev/peers/oidc-server.js';
import { eventsOf, openConnectPopup, waitForEvent, loginAndConsent } from '../support/browser.js';
import { startConnectBed, type ConnectBed } from '../support/connect-bed.js';
import { sealSession } from '../support/fixtures.js';
import { listenOnLoopback } from '../support/servers/loopback.js';

const kc = testKubeConfig();
const custom = kc.makeApiClient(CustomObjectsApi);
const PROVIDER = `oidc-binding-${process.pid}`;
const CLIENT = { clientId: 'latchkey-binding-test', clientSecret: 'binding-test-secret-value' };

let oidc: OidcTestServer;
let bed: ConnectBed;
let relay: { url: string; hits: Array<{ method: string }>; close(): Promise<void> };
/** What oidc-provider's token endpoint refused, for readable failures. */
const grantErrors: string[] = [];

/**
 * The application's own callback address: answers 308 to Latchkey's callback with every query
 * parameter (308 keeps the method and the body of a form_post). On `localhost`, so that the hop
 * back to Latchkey (on 127.0.0.1) is a cross-site request, as with a real custom domain.
 */
async function startRelay(target: string): Promise<typeof relay> {
  const hits: Array<{ method: string }> = [];
  const server: Server = createServer((req, res) => {
    hits.push({ method: req.method ?? '' });
    const url = new URL(req.url ?? '/', 'http://localhost');
    res.writeHead(308, { location: `${target}${url.search}` }).end();
  });
  const site = await listenOnLoopback(server);
  return {
    url: `http://localhost:${site.port}/oauth/callback`,
    hits,
    close: site.close,
  };
}

beforeAll(async () => {
  bed = await startConnectBed(kc, 'connect-binding', 'development');
  relay = await startRelay(`${bed.latchkey.url}/oauth/callback`);
  oidc = await startOidcServer({ clients: [{ ...CLIENT, redirectUris: [`${bed.latchkey.url}/oauth/callback`, relay.url] }] });
  oidc.provider.on('grant.error', (_ctx: unknown, err: { message?: string; error_description?: string }) =>
    grantErrors.push(`${err.message}: ${err.error_description}`),
  );
  await applyProvider(kc, PROVIDER, {
    displayName: 'Acme Identity',
    authMode: 'OAUTH2',
    authorizationUrl: oidc.authorizationUrl,
    tokenUrl: oidc.tokenUrl,
    defaultScopes: ['openid'],
  });
  const integration = { provider: PROVIDER, scopes: ['openid', 'offline_access'], authorizationParams: { prompt: 'consent' } };
  await createIntegration(kc, bed.ns.name, 'acme', integration, CLIENT);
  await createIntegration(
    kc,
    bed.ns.name,
    'acme-post',
    { ...integration, authorizationParams: { prompt: 'consent', response_mode: 'form_post' } },
    CLIENT,
  );
  await bed.synced(
    (store) =>
      store.catalog.getIntegration(bed.ns.name, 'acme-post') &&
      store.catalog.getProvider(PROVIDER) &&
      store.catalog.readSecretValue(bed.ns.name, 'acme-client', 'clientId') &&
      store.catalog.readSecretValue(bed.ns.name, 'acme-post-client', 'clientId'),
  );
});

afterAll(async () => {
  await oidc?.close();
  await relay?.close();
  await deleteProvider(kc, PROVIDER);
  await bed?.close();
});

async function userinfo(accessToken: string): Promise<string | undefined> {
  const res = await fetch(`${oidc.issuer}/me`, { headers: { authorization: `Bearer ${accessToken}` } });
  return res.ok ? ((await res.json()) as { sub: string }).sub : undefined;
}

function session(endUserId: string, integration: string): string {
  return sealSession(bed.env.secretKey, { namespace: bed.ns.name, endUser: { id: endUserId }, allowedIntegrations: [integration] });
}

function connectionsOf(endUserId: string) {
  return bed.latchkey.ctx.connectionScans.listConnections(bed.ns.name).filter((c) => c.spec.endUser?.id === endUserId);
}

describe('the OAuth callback is bound to the browser that started the flow', () => {
  it("refuses the victim's consent to the attacker's authorization link: 403 page, no token call, nothing saved; the attacker's own flow still works", async () => {
    const mallory = await bed.browser.newContext();
    const victim = await bed.browser.newContext();
    try {
      // M starts a flow and keeps the provider link instead of following it to the end.
      const { app: malloryApp, popup } = await openConnectPopup(mallory, bed.app.url, session('mallory', 'acme'));
      const authorizationLink = await new Promise<string>((resolve) => {
        const seen = (r: { url(): string }) => r.url().startsWith(oidc.authorizationUrl) && resolve(r.url());
        popup.on('request', seen);
      });
      const cookies = await mallory.cookies(bed.latchkey.url);
      const binding = cookies.find((c) => c.name === 'latchkey-flow');
      expect(binding).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false });

      // V opens it in another browser and consents.
      const tokenCallsBefore = oidc.tokenCalls.length;
      const page = await victim.newPage();
      await page.goto(authorizationLink);
      await loginAndConsent(page, oidc.issuer, 'victim');
      const [callback] = await Promise.all([
        page.waitForResponse((r) => r.url().startsWith(`${bed.latchkey.url}/oauth/callback`)),
        page.click('text=Continue'),
      ]);
      expect(callback.status()).toBe(403);
      await page.waitForSelector('text=Could not connect');
      expect(await page.textContent('main')).toContain('started in another browser');
      expect(oidc.tokenCalls.length).toBe(tokenCallsBefore);
      expect(connectionsOf('mallory')).toHaveLength(0);

      // M's own flow, in M's browser, still completes (the refused callback consumed nothing).
      await loginAndConsent(popup, oidc.issuer, 'mallory');
      await popup.click('text=Continue');
      const connect = await waitForEvent(malloryApp, 'connect');
      const stored = await eventually(() => bed.latchkey.ctx.connections.getConnection(bed.ns.name, 'acme', connect.connectionId!));
      expect(await userinfo(stored.credentials.access_token as string)).toBe('mallory');
      expect(connectionsOf('mallory')).toHaveLength(1);
      expect(oidc.tokenCalls.length).toBe(tokenCallsBefore + 1);
    } finally {
      await mallory.close();
      await victim.close();
    }
  });

  it('refuses a callback with another browser binding or without one before any token call', async () => {
    const tokenCallsBefore = oidc.tokenCalls.length;
    const start = await fetch(`${bed.latchkey.url}/connect/api/oauth/start`, {
      method: 'POST',
      headers: { authorization: `Bearer ${session('script', 'acme')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ integration: 'acme' }),
    });
    expect(start.status).toBe(200);
    // The flow's binding, and (beside it) the page's language and theme for the callback's page.
    const cookies = start.headers.getSetCookie();
    const setCookie = cookies.find((c) => c.startsWith('latchkey-flow=')) ?? '';
    expect(setCookie).toMatch(/^latchkey-flow=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
    expect(cookies.filter((c) => c !== setCookie)).toEqual(['latchkey-look=en.system; Path=/; Max-Age=3600; HttpOnly; SameSite=Lax']);
    const { data } = (await start.json()) as { data: { url: string; binding: string } };
    expect(setCookie).toContain(data.binding);
    const state = new URL(data.url).searchParams.get('state')!;
    const callback = `${bed.latchkey.url}/oauth/callback?state=${encodeURIComponent(state)}&code=anything`;
    for (const cookie of [undefined, `latchkey-flow=${'A'.repeat(43)}`, 'latchkey-flow=not-a-binding']) {
      const res = await fetch(callback, { headers: cookie ? { cookie } : {} });
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(await res.text()).toContain('browser_mismatch');
    }
    // The right cookie reaches the exchange (the made-up code fails there: one token call, a 502 page).
    const right = await fetch(callback, { headers: { cookie: `other=1; latchkey-flow=${data.binding}` } });
    expect(right.status).toBeGreaterThanOrEqual(400);
    expect(await right.text()).not.toContain('browser_mismatch');
    expect(oidc.tokenCalls.length).toBe(tokenCallsBefore + 1);
    expect(connectionsOf('script')).toHaveLength(0);
  });

  it('binds only through the session API: oauth/bind needs the session token and a well-formed binding', async () => {
    const noSession = await fetch(`${bed.latchkey.url}/connect/api/oauth/bind`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ binding: 'A'.repeat(43) }),
    });
    expect(noSession.status).toBe(401);
    expect(noSession.headers.get('set-cookie')).toBeNull();
    const headers = { authorization: `Bearer ${session('binder', 'acme')}`, 'content-type': 'application/json' };
    const bad = await fetch(`${bed.latchkey.url}/connect/api/oauth/bind`, { method: 'POST', headers, body: '{"binding":"short"}' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBeTruthy();
    const ok = await fetch(`${bed.latchkey.url}/connect/api/oauth/bind`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ binding: 'B'.repeat(43) }),
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('set-cookie')).toContain(`latchkey-flow=${'B'.repeat(43)}`);
  });
});

describe("an Environment's custom callback URL", () => {
  beforeAll(async () => {
    await custom.patchNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: bed.ns.name,
      plural: 'environments',
      name: bed.env.name,
      body: [{ op: 'add', path: '/spec/callbackUrl', value: relay.url }],
    });
    await bed.synced((store) => store.catalog.listEnvironments(bed.ns.name)[0]?.spec.callbackUrl === relay.url);
  });

  it.each([
    ['acme', 'GET', 'relay-get'],
    ['acme-post', 'POST', 'relay-post'],
  ])('completes the OAuth 2 flow of %s through the 308 relay (callback by %s)', async (integration, method, login) => {
    const context = await bed.browser.newContext();
    try {
      const hitsBefore = relay.hits.length;
      const { app, popup } = await openConnectPopup(context, bed.app.url, session(login, integration));
      const authorization = await new Promise<string>((resolve) =>
        popup.on('request', (r) => r.url().startsWith(oidc.authorizationUrl) && resolve(r.url())),
      );
      expect(new URL(authorization).searchParams.get('redirect_uri')).toBe(relay.url);
      await loginAndConsent(popup, oidc.issuer, login);
      const grantErrorsBefore = grantErrors.length;
      await popup.click('text=Continue');
      // The popup closes itself after a success: read the outcome from the application's events.
      await app.waitForFunction(() =>
        (window as unknown as { latchkeyEvents: Array<{ type: string }> }).latchkeyEvents.some(
          (e) => e.type === 'connect' || e.type === 'error',
        ),
      );
      expect(grantErrors.slice(grantErrorsBefore)).toEqual([]);
      expect((await eventsOf(app)).find((e) => e.type === 'connect' || e.type === 'error')).toMatchObject({ type: 'connect' });
      const connect = await waitForEvent(app, 'connect');
      expect(connect.providerConfigKey).toBe(integration);
      const stored = await eventually(() => bed.latchkey.ctx.connections.getConnection(bed.ns.name, integration, connect.connectionId!));
      expect(await userinfo(stored.credentials.access_token as string)).toBe(login);
      expect(relay.hits.slice(hitsBefore).map((h) => h.method)).toEqual([method]);
    } finally {
      await context.close();
    }
  });

  it('refuses a form_post callback whose fields are not plain strings', async () => {
    const res = await fetch(`${bed.latchkey.url}/oauth/callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'state=a&state=b&code=c',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('text/html');
  });
});
