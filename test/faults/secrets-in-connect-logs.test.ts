/**
 * Secrets in real log lines, Connect flows (#17): the Connect bed's replica (server + webhook
 * dispatcher) logs at `debug` into memory while Chromium runs the end-user flows against real peers:
 *
 * - OAuth 2 with PKCE at oidc-provider: session tokens from `POST /connect/sessions`, the list, login,
 *   consent, a stored connection and its webhook; a re-authorization whose consent is denied; a token
 *   exchange the provider refuses (wrong client secret); and a token endpoint whose error answer quotes
 *   what it was sent (code, PKCE verifier, client secret), as a hostile or careless provider (or a WAF
 *   page) does.
 * - OAuth 1.0a at the oauthlib server: a success, a denial, a forged verifier, a request-token call the
 *   provider refuses (wrong consumer secret).
 * - Hostile callbacks and Connect API calls: a replayed callback (same browser, another browser), a
 *   forged state, a tampered state, a repeated state, a form_post callback without the flow cookie, a
 *   bogus session token, a body that is not JSON.
 *
 * The test learns every secret value that crosses a wire: what the browser asks for (authorization
 * codes, states, PKCE challenges, OAuth 1 request tokens and verifiers, the session token it sends),
 * its cookies (the flow cookie), what goes through recording proxies in front of the token endpoints
 * (PKCE verifiers, client secrets, access, refresh and ID tokens, OAuth 1 token secrets), what the
 * connections store, and the keys of the Environment. No captured line may hold one of them.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { BrowserContext, Page } from 'playwright-core';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { startOidcServer, type OidcTestServer } from '../../dev/peers/oidc-server.js';
import { openConnectPopup, waitForEvent, loginAndConsent } from '../support/browser.js';
import { startConnectBed, type ConnectBed } from '../support/connect-bed.js';
import { startHttpFaultProxy, type HttpFaultProxy } from '../support/faults/http-fault-proxy.js';
import { captureLogs, needlesOf, writeScanResults, type LogCapture } from '../support/log-capture.js';
import { startOAuth1Server, type OAuth1TestServer } from '../support/servers/oauth1-server.js';
import { listenOnLoopback } from '../support/servers/loopback.js';

const kc = testKubeConfig();
const suffix = randomBytes(3).toString('hex');
const OAUTH2 = `logscan-connect-oidc-${suffix}`;
const ECHO = `logscan-connect-echo-${suffix}`;
const OAUTH1 = `logscan-connect-oauth1-${suffix}`;
const CLIENT = { clientId: `latchkey-logscan-connect-${suffix}`, clientSecret: `logscan-client-secret-${randomBytes(12).toString('hex')}` };
const WRONG_CLIENT_SECRET = `logscan-wrong-client-secret-${randomBytes(12).toString('hex')}`;
// oauthlib accepts keys of letters, digits, '_' and '-' only.
const CONSUMER = { clientId: `consumer_key_logscan_${suffix}`, clientSecret: `logscan-consumer-secret-${randomBytes(12).toString('hex')}` };
const WRONG_CONSUMER_SECRET = `logscan-wrong-consumer-secret-${randomBytes(12).toString('hex')}`;

/** Every secret value the test knows, with its kind (for the figures and the report of a leak). */
const secrets = new Map<string, string>();
function learn(kind: string, value: unknown): void {
  if (typeof value === 'string' && value.length >= 8 && !secrets.has(value)) secrets.set(value, kind);
}

/** Query, form and JSON keys whose values are secrets wherever they appear; OAuth 1 tokens are named by where they were seen. */
const KIND_OF_KEY: Record<string, string> = {
  code: 'OAuth 2 authorization code',
  state: 'OAuth state',
  code_verifier: 'PKCE code verifier',
  code_challenge: 'PKCE code challenge',
  client_secret: 'client secret',
  access_token: 'OAuth 2 access token',
  refresh_token: 'OAuth 2 refresh token',
  id_token: 'OpenID Connect ID token',
  session_token: 'connect session token',
  oauth_verifier: 'OAuth 1 verifier',
  binding: 'flow cookie',
};
type OAuth1Stage = 'request' | 'access';
function kindOf(key: string, stage: OAuth1Stage): string | undefined {
  if (key === 'oauth_token') return `OAuth 1 ${stage} token`;
  if (key === 'oauth_token_secret') return `OAuth 1 ${stage} token secret`;
  return KIND_OF_KEY[key];
}
function learnParams(params: URLSearchParams, stage: OAuth1Stage): void {
  for (const [k, v] of params) {
    const kind = kindOf(k, stage);
    if (kind) learn(kind, v);
  }
}
function learnJson(value: unknown, stage: OAuth1Stage): void {
  if (Array.isArray(value)) for (const v of value) learnJson(v, stage);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const kind = kindOf(k, stage);
      if (kind && typeof v === 'string') learn(kind, v);
      else learnJson(v, stage);
    }
  }
}
function learnUrl(href: string, stage: OAuth1Stage = 'request'): void {
  const url = new URL(href);
  learnParams(url.searchParams, stage);
  if (url.hash) learnParams(new URLSearchParams(url.hash.slice(1)), stage);
}
/** A JSON or form body (a token request or answer). */
function learnBody(text: string | undefined, stage: OAuth1Stage): void {
  if (!text) return;
  try {
    learnJson(JSON.parse(text), stage);
    return;
  } catch {
    // a form
  }
  learnParams(new URLSearchParams(text), stage);
}

let logs: LogCapture;
let bed: ConnectBed;
let oidc: OidcTestServer;
let oauth1: OAuth1TestServer;
let oidcTokens: HttpFaultProxy;
let oauth1Tokens: HttpFaultProxy;
let echo: { url: string; requests: string[]; close(): Promise<void> };
/** What the flows ended with, for the cases below. */
const outcome = { connections: [] as string[], errors: [] as string[], statuses: {} as Record<string, number> };

/**
 * A token endpoint that refuses every code and quotes what it was sent in its error description (some
 * providers echo parameters; a WAF's error page may echo the whole request).
 */
async function startEchoingTokenEndpoint(): Promise<typeof echo> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push(body);
      const form = new URLSearchParams(body);
      res.writeHead(400, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          error: 'invalid_grant',
          error_description:
            `authorization code ${form.get('code')} is invalid or expired; code_verifier ${form.get('code_verifier')} ` +
            `for client ${form.get('client_id')} with secret ${form.get('client_secret')}`,
        }),
      );
    });
  });
  const site = await listenOnLoopback(server);
  return {
    url: site.origin,
    requests,
    close: site.close,
  };
}

/** A session token from the REST API, as an application backend gets it (`/connect/sessions` or `/connect/sessions/reconnect`). */
async function sessionToken(path: string, body: unknown): Promise<string> {
  const res = await bed.latchkey.call('POST', path, { key: bed.env.secretKey, body });
  expect(res.status).toBe(201);
  learn('connect session token', res.body.data.token);
  return res.body.data.token as string;
}

/**
 * Runs `flow` in a fresh browser context that learns every URL it asks for (redirects included), the
 * bodies it posts, the session token it sends, and finally its cookies. `callbacks` lists the OAuth
 * callback URLs the browser was sent to.
 */
async function inBrowser<T>(flow: (context: BrowserContext, callbacks: string[]) => Promise<T>): Promise<T> {
  const context = await bed.browser.newContext();
  const callbacks: string[] = [];
  context.on('request', (r) => {
    learnUrl(r.url());
    learnBody(r.postData() ?? undefined, 'request');
    const bearer = /^Bearer (.+)$/i.exec(r.headers().authorization ?? '');
    if (bearer) learn('connect session token', bearer[1]);
    if (r.url().startsWith(`${bed.latchkey.url}/oauth/callback`)) callbacks.push(r.url());
  });
  try {
    return await flow(context, callbacks);
  } finally {
    for (const c of await context.cookies()) learn(c.name === 'latchkey-flow' ? 'flow cookie' : 'provider cookie', c.value);
    await context.close();
  }
}

/** The error code the application page heard from the Connect UI. */
async function errorCode(app: Page): Promise<string | undefined> {
  return (await waitForEvent(app, 'error')).error?.code;
}

/**
 * The connection the application page heard of: noted, its stored credentials learnt, and its callback sent
 * again, refused from this browser (already used) and from another one (not bound): `<flow>Replay…` statuses.
 */
async function connectedAndReplayed(
  browser: { app: Page; context: BrowserContext; callbacks: string[] },
  integration: 'oidc' | 'oauth1',
  flow: 'oauth2' | 'oauth1',
): Promise<{ connectionId: string; callback: string }> {
  const connectionId = (await waitForEvent(browser.app, 'connect')).connectionId!;
  outcome.connections.push(`${integration}/${connectionId}`);
  const stored = await eventually(() => bed.latchkey.ctx.connections.getConnection(bed.ns.name, integration, connectionId));
  learnJson(stored.credentials, 'access');
  const callback = browser.callbacks.at(-1)!;
  outcome.statuses[`${flow}ReplaySameBrowser`] = (await browser.context.request.get(callback)).status();
  outcome.statuses[`${flow}ReplayOtherBrowser`] = (await fetch(callback)).status;
  return { connectionId, callback };
}

async function oauth2Success(): Promise<string> {
  return inBrowser(async (context, callbacks) => {
    const token = await sessionToken('/connect/sessions', {
      end_user: { id: 'scan-user-1', email: 'scan1@example.test' },
      allowed_integrations: ['oidc', 'oauth1'],
    });
    const { app, popup } = await openConnectPopup(context, bed.app.url, token);
    await popup.click('button[data-integration=oidc]');
    await loginAndConsent(popup, oidc.issuer, 'alice');
    await popup.click('text=Continue');
    const { connectionId, callback } = await connectedAndReplayed({ app, context, callbacks }, 'oidc', 'oauth2');
    // Hostile callbacks built from the real state.
    const state = new URL(callback).searchParams.get('state')!;
    const mac = state.slice(-8);
    const tampered = `${state.slice(0, -8)}${mac === 'AAAAAAAA' ? 'BBBBBBBB' : 'AAAAAAAA'}`;
    const forgedCode = `forged-code-${randomBytes(16).toString('hex')}`;
    learn('forged authorization code', forgedCode);
    learn('tampered state', tampered);
    const base = `${bed.latchkey.url}/oauth/callback`;
    outcome.statuses.tamperedState = (
      await context.request.get(`${base}?state=${encodeURIComponent(tampered)}&code=${forgedCode}`)
    ).status();
    outcome.statuses.repeatedState = (
      await context.request.get(`${base}?state=${encodeURIComponent(state)}&state=${encodeURIComponent(tampered)}&code=${forgedCode}`)
    ).status();
    const post = await fetch(base, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ state, code: forgedCode }),
      redirect: 'manual',
    });
    outcome.statuses.formPostWithoutCookie = post.status;
    return connectionId;
  });
}

async function oauth2ReconnectDenied(connectionId: string): Promise<void> {
  await inBrowser(async (context) => {
    const token = await sessionToken('/connect/sessions/reconnect', { connection_id: connectionId, integration_id: 'oidc' });
    const { app, popup } = await openConnectPopup(context, bed.app.url, token);
    await loginAndConsent(popup, oidc.issuer, 'alice');
    await popup.click('text=[ Cancel ]');
    outcome.errors.push(`oidc reconnect: ${await errorCode(app)}`);
  });
  // The failed re-authorization is recorded on the connection (a write with its own log lines on failure).
  await eventually(() => bed.latchkey.ctx.connections.getConnection(bed.ns.name, 'oidc', connectionId)?.resource.status?.errors?.length);
}

/** A first connect whose token exchange fails at the callback (the provider refuses the client, or quotes the request). */
async function oauth2ExchangeRefused(integration: string, user: string): Promise<void> {
  await inBrowser(async (context) => {
    const token = await sessionToken('/connect/sessions', { end_user: { id: user }, allowed_integrations: [integration] });
    const { app, popup } = await openConnectPopup(context, bed.app.url, token);
    await loginAndConsent(popup, oidc.issuer, user);
    await popup.click('text=Continue');
    outcome.errors.push(`${integration}: ${await errorCode(app)}`);
  });
}

async function oauth1Success(): Promise<void> {
  await inBrowser(async (context, callbacks) => {
    const token = await sessionToken('/connect/sessions', { end_user: { id: 'scan-user-4' }, allowed_integrations: ['oauth1'] });
    const { app, popup } = await openConnectPopup(context, bed.app.url, token);
    await popup.waitForURL((u) => u.href.startsWith(`${oauth1.url}/authorize`), { timeout: 20_000 });
    await popup.click('button[value=approve]');
    await connectedAndReplayed({ app, context, callbacks }, 'oauth1', 'oauth1');
  });
}

async function oauth1Denied(): Promise<void> {
  await inBrowser(async (context) => {
    const token = await sessionToken('/connect/sessions', { end_user: { id: 'scan-user-5' }, allowed_integrations: ['oauth1'] });
    const { app, popup } = await openConnectPopup(context, bed.app.url, token);
    await popup.waitForURL((u) => u.href.startsWith(`${oauth1.url}/authorize`), { timeout: 20_000 });
    await popup.click('button[value=deny]');
    outcome.errors.push(`oauth1 denied: ${await errorCode(app)}`);
  });
}

/** The approval's redirect to the callback is rewritten on its way to the browser: a forged verifier reaches Latchkey. */
async function oauth1ForgedVerifier(): Promise<void> {
  await inBrowser(async (context) => {
    const token = await sessionToken('/connect/sessions', { end_user: { id: 'scan-user-6' }, allowed_integrations: ['oauth1'] });
    const { app, popup } = await openConnectPopup(context, bed.app.url, token);
    // The approval (a form POST) is the first request of its redirect chain: the one a route sees.
    await popup.route(
      (u) => u.href.startsWith(`${oauth1.url}/authorize`),
      async (route) => {
        if (route.request().method() !== 'POST') return route.continue();
        const answer = await route.fetch({ maxRedirects: 0 });
        const location = new URL(answer.headers().location!);
        learnUrl(location.href);
        const forged = `forgedverifier${randomBytes(8).toString('hex')}`;
        learn('forged OAuth 1 verifier', forged);
        location.searchParams.set('oauth_verifier', forged);
        await route.fulfill({ status: 302, headers: { location: location.href } });
      },
    );
    await popup.waitForURL((u) => u.href.startsWith(`${oauth1.url}/authorize`), { timeout: 20_000 });
    await popup.click('button[value=approve]');
    outcome.errors.push(`oauth1 forged verifier: ${await errorCode(app)}`);
  });
}

/** The request-token call is refused (the Integration holds a wrong consumer secret): the start answers 502. */
async function oauth1StartRefused(): Promise<void> {
  const token = await sessionToken('/connect/sessions', { end_user: { id: 'scan-user-7' }, allowed_integrations: ['oauth1-wrong'] });
  const res = await fetch(`${bed.latchkey.url}/connect/api/oauth/start`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ integration: 'oauth1-wrong' }),
  });
  outcome.statuses.oauth1StartRefused = res.status;
  learnJson(await res.json(), 'request');
}

/** Callbacks and Connect API calls from no browser at all, with secrets in them. */
async function hostileRequests(): Promise<void> {
  const base = bed.latchkey.url;
  const forgedCode = `forged-code-${randomBytes(16).toString('hex')}`;
  learn('forged authorization code', forgedCode);
  const forgedState = `lkf1.${Buffer.from(bed.ns.name).toString('base64url')}.${randomBytes(48).toString('base64url')}`;
  learn('forged state', forgedState);
  outcome.statuses.forgedState = (await fetch(`${base}/oauth/callback?state=${forgedState}&code=${forgedCode}`)).status;
  outcome.statuses.noState = (await fetch(`${base}/oauth/callback?code=${forgedCode}`)).status;
  const bogus = `lks_1.${randomBytes(24).toString('base64url')}.${randomBytes(32).toString('base64url')}`;
  learn('bogus session token', bogus);
  outcome.statuses.bogusSession = (await fetch(`${base}/connect/api/session`, { headers: { authorization: `Bearer ${bogus}` } })).status;
  const token = await sessionToken('/connect/sessions', { end_user: { id: 'scan-user-8' }, allowed_integrations: ['oidc'] });
  const notJson = await fetch(`${base}/connect/api/oauth/start`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: `{"integration":"oidc","client_secret":"${CLIENT.clientSecret}", not json`,
  });
  outcome.statuses.notJson = notJson.status;
  const notAllowed = await fetch(`${base}/connect/api/oauth/start`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ integration: 'oauth1' }),
  });
  outcome.statuses.notAllowed = notAllowed.status;
}

beforeAll(async () => {
  logs = captureLogs();
  bed = await startConnectBed(kc, 'logscan-connect', 'development', { logger: logs.logger });
  const callback = `${bed.latchkey.url}/oauth/callback`;
  [oidc, oauth1, echo] = await Promise.all([
    startOidcServer({ clients: [{ ...CLIENT, redirectUris: [callback] }], accessTokenTtl: 3600 }),
    startOAuth1Server(CONSUMER.clientId, CONSUMER.clientSecret),
    startEchoingTokenEndpoint(),
  ]);
  // The token endpoints behind recording proxies: what Latchkey sends and gets back there is known here.
  [oidcTokens, oauth1Tokens] = await Promise.all([startHttpFaultProxy(oidc.issuer), startHttpFaultProxy(oauth1.url, { keepHost: true })]);
  oidcTokens.recordBodies = true;
  oauth1Tokens.recordBodies = true;
  await Promise.all([
    applyProvider(kc, OAUTH2, {
      displayName: 'Log scan OIDC',
      authMode: 'OAUTH2',
      authorizationUrl: oidc.authorizationUrl,
      tokenUrl: `${oidcTokens.url}${new URL(oidc.tokenUrl).pathname}`,
      defaultScopes: ['openid'],
    }),
    applyProvider(kc, ECHO, {
      displayName: 'Log scan echo',
      authMode: 'OAUTH2',
      authorizationUrl: oidc.authorizationUrl,
      tokenUrl: `${echo.url}/token`,
      defaultScopes: ['openid'],
    }),
    applyProvider(kc, OAUTH1, {
      displayName: 'Log scan OAuth 1',
      authMode: 'OAUTH1',
      requestTokenUrl: `${oauth1Tokens.url}/request_token`,
      authorizationUrl: `${oauth1.url}/authorize`,
      tokenUrl: `${oauth1Tokens.url}/access_token`,
    }),
  ]);
  const oauth2Spec = { scopes: ['openid', 'offline_access'], authorizationParams: { prompt: 'consent' } };
  await createIntegration(kc, bed.ns.name, 'oidc', { provider: OAUTH2, ...oauth2Spec }, CLIENT);
  await createIntegration(
    kc,
    bed.ns.name,
    'oidc-wrong',
    { provider: OAUTH2, ...oauth2Spec },
    { ...CLIENT, clientSecret: WRONG_CLIENT_SECRET },
  );
  await createIntegration(kc, bed.ns.name, 'oidc-echo', { provider: ECHO, ...oauth2Spec }, CLIENT);
  await createIntegration(kc, bed.ns.name, 'oauth1', { provider: OAUTH1 }, CONSUMER);
  await createIntegration(kc, bed.ns.name, 'oauth1-wrong', { provider: OAUTH1 }, { ...CONSUMER, clientSecret: WRONG_CONSUMER_SECRET });
  await bed.synced(
    (store) =>
      [OAUTH2, ECHO, OAUTH1].every((p) => store.catalog.getProvider(p)) &&
      ['oidc', 'oidc-wrong', 'oidc-echo', 'oauth1', 'oauth1-wrong'].every(
        (i) => store.catalog.getIntegration(bed.ns.name, i) && store.catalog.readSecretValue(bed.ns.name, `${i}-client`, 'clientSecret'),
      ),
  );
  learn('environment secret key', bed.env.secretKey);
  learn('webhook signing key', bed.env.webhookSigningKey);
  for (const s of [CLIENT.clientSecret, WRONG_CLIENT_SECRET, CONSUMER.clientSecret, WRONG_CONSUMER_SECRET]) learn('client secret', s);

  // The flows, one after the other (each in its own browser context).
  const oidcConnection = await oauth2Success();
  await oauth2ReconnectDenied(oidcConnection);
  await oauth2ExchangeRefused('oidc-wrong', 'scan-user-2');
  await oauth2ExchangeRefused('oidc-echo', 'scan-user-3');
  await oauth1Success();
  await oauth1Denied();
  await oauth1ForgedVerifier();
  await oauth1StartRefused();
  await hostileRequests();

  // Both creation webhooks delivered (their lines are scanned too).
  const ids = outcome.connections.map((c) => c.split('/')[1]);
  await eventually(() => ids.every((id) => bed.receiver.delivered().some((w) => w.json.connectionId === id)), 60_000);

  // What crossed the token endpoints.
  for (const seen of oidcTokens.seen) {
    learnBody(seen.requestBody, 'access');
    learnBody(seen.responseBody, 'access');
  }
  for (const seen of oauth1Tokens.seen) {
    const stage = seen.path.startsWith('/request_token') ? 'request' : 'access';
    learnBody(seen.requestBody, stage);
    learnBody(seen.responseBody, stage);
  }
  for (const body of echo.requests) learnBody(body, 'access');
}, 420_000);

afterAll(async () => {
  await Promise.all([oidcTokens?.close(), oauth1Tokens?.close(), echo?.close(), oidc?.close(), oauth1?.close()]);
  await Promise.all([OAUTH2, ECHO, OAUTH1].map((p) => deleteProvider(kc, p)));
  await bed?.close();
});

/** The captured lines, parsed. */
function parsedLines(): Array<Record<string, unknown>> {
  return logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('secrets in real debug log lines of the Connect flows', () => {
  it('ran every flow to the outcome it was meant to have', () => {
    expect(outcome.connections).toHaveLength(2);
    expect(outcome.errors.sort()).toEqual(
      [
        'oidc reconnect: access_denied',
        'oidc-wrong: token_exchange_failed',
        'oidc-echo: token_exchange_failed',
        'oauth1 denied: access_denied',
        'oauth1 forged verifier: token_exchange_failed',
      ].sort(),
    );
    expect(outcome.statuses).toEqual({
      oauth2ReplaySameBrowser: 400,
      oauth2ReplayOtherBrowser: 403,
      tamperedState: 400,
      repeatedState: 400,
      formPostWithoutCookie: 303,
      oauth1ReplaySameBrowser: 400,
      oauth1ReplayOtherBrowser: 403,
      oauth1StartRefused: 502,
      forgedState: 400,
      noState: 400,
      bogusSession: 401,
      notJson: 400,
      notAllowed: 403,
    });
  });

  it('knows a secret of every kind the flows exchange (else the scan proves less than it says)', () => {
    const kinds = new Set(secrets.values());
    for (const kind of [
      'environment secret key',
      'webhook signing key',
      'client secret',
      'connect session token',
      'flow cookie',
      'OAuth state',
      'OAuth 2 authorization code',
      'PKCE code challenge',
      'PKCE code verifier',
      'OAuth 2 access token',
      'OAuth 2 refresh token',
      'OpenID Connect ID token',
      'OAuth 1 request token',
      'OAuth 1 request token secret',
      'OAuth 1 verifier',
      'OAuth 1 access token',
      'OAuth 1 access token secret',
    ])
      expect([kind, kinds.has(kind)]).toEqual([kind, true]);
    // The verifiers were really sent with the codes (the token requests were recorded).
    const exchanges = [...oidcTokens.seen.map((s) => s.requestBody), ...echo.requests].map((b) => new URLSearchParams(b ?? ''));
    expect(exchanges.filter((f) => f.get('grant_type') === 'authorization_code' && f.get('code') && f.get('code_verifier'))).toHaveLength(
      3,
    );
    expect(oauth1Tokens.seen.filter((s) => s.path.startsWith('/access_token'))).toHaveLength(2);
  });

  it('captured the lines of every flow, failures included', () => {
    expect(logs.logger.isLevelEnabled('debug')).toBe(true);
    const lines = parsedLines();
    const has = (pred: (l: Record<string, unknown>) => boolean, what: string) => expect([what, lines.some(pred)]).toEqual([what, true]);
    // A successful callback's entry names the last step it reached (token_exchange).
    const attempt = (integration: string, outcomeOf: string, step: string) => (l: Record<string, unknown>) =>
      l.msg === 'operation authorization' && l.integration === integration && l.outcome === outcomeOf && l.step === step;
    has(attempt('oidc', 'success', 'start'), 'OAuth 2 start');
    has(attempt('oidc', 'success', 'token_exchange'), 'OAuth 2 callback');
    has(attempt('oidc', 'failure', 'callback'), 'OAuth 2 denial / replay');
    has(attempt('oidc-wrong', 'failure', 'token_exchange'), 'OAuth 2 exchange refused');
    has(attempt('oidc-echo', 'failure', 'token_exchange'), 'OAuth 2 exchange refused, answer quoting the request');
    has(attempt('oauth1', 'success', 'start'), 'OAuth 1 start');
    has(attempt('oauth1', 'success', 'token_exchange'), 'OAuth 1 callback');
    has(attempt('oauth1', 'failure', 'callback'), 'OAuth 1 denial / replay');
    has(attempt('oauth1', 'failure', 'token_exchange'), 'OAuth 1 forged verifier');
    has(attempt('oauth1-wrong', 'failure', 'start'), 'OAuth 1 request token refused');
    // The provider's answer is kept for whoever reads the log, without what it quoted.
    has(
      (l) =>
        l.msg === 'token exchange failed' &&
        l.integration === 'oidc-echo' &&
        String(l.err).includes('400 invalid_grant: authorization code'),
      "the quoting provider's answer logged",
    );
    has(
      (l) => l.msg === 'token exchange failed' && l.integration === 'oidc-wrong' && String(l.err).includes('invalid_client'),
      "the refusal's answer logged",
    );
    has((l) => l.msg === 'could not start the authorization flow', 'the start failure logged');
    has((l) => l.msg === 'OAuth callback from a browser that did not start the flow', 'a callback from another browser');
    has((l) => l.msg === 'end user authorized a connection', 'a connection saved');
    has((l) => l.msg === 'webhook delivered', 'a webhook delivered');
    // No path of these flows logs at debug: the lines are info and warn (32 in the runs so far).
    expect(lines.length).toBeGreaterThanOrEqual(25);
  });

  it('finds no secret value in any captured line (messages, error fields, stack traces)', () => {
    // Each value as it is, URL-encoded and JSON-escaped; a long one also by its last 16 characters (a
    // truncated or partly masked value still leaks its random part).
    const needles = needlesOf(secrets);
    const leaks = logs.leaks(needles.keys()).map((l) => `${needles.get(l.secret)} ${l.secret.slice(0, 6)}… in ${l.line.slice(0, 600)}`);
    writeScanResults('secrets-in-connect-logs', logs, secrets, { leaks });
    expect(leaks).toEqual([]);
  });
});
