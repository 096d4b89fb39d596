/**
 * A re-authorization that fails, in Chromium against a real authorization server (oidc-provider): a
 * denied consent, a token exchange the provider refuses (the Integration's client secret is wrong), and
 * client credentials typed in a reconnect form that the provider refuses.
 * Each leaves an `auth` entry in the connection's `errors[]` whose `log_id` resolves with GET /logs/{id},
 * and leaves the stored credentials (still working at the provider), configuration and metadata as
 * they were. A first connect that fails the same way creates nothing.
 */
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { openConnectPopup, waitForEvent } from '../support/browser.js';
import { startOAuth2ConnectBed, type OAuth2ConnectBed } from '../support/connect-bed.js';
import { importOAuth2, sealSession } from '../support/fixtures.js';

const kc = testKubeConfig();
const PROVIDER = `oidc-reauth-fail-${process.pid}`;
const CC_PROVIDER = `cc-reauth-fail-${process.pid}`;
const CLIENT = { clientId: 'latchkey-reauth-fail', clientSecret: 'reauth-fail-secret-value-0123456789' };
const WRONG_SECRET = 'not-the-client-secret-9876543210';

let bed: OAuth2ConnectBed;
let { ns, env, latchkey, receiver, app, browser, oidc, loginAndConsent } = {} as OAuth2ConnectBed;

beforeAll(async () => {
  // Tokens that last an hour: no fetch in these cases refreshes them (a refresh would write errors of its own).
  bed = await startOAuth2ConnectBed(kc, { prefix: 'connect-reauth-fail', provider: PROVIDER, client: CLIENT, accessTokenTtl: 3600 });
  ({ ns, env, latchkey, receiver, app, browser, oidc, loginAndConsent } = bed);
  await applyProvider(kc, CC_PROVIDER, { displayName: 'Machine API', authMode: 'OAUTH2_CC', tokenUrl: oidc.tokenUrl });
  await createIntegration(kc, ns.name, 'machine', { provider: CC_PROVIDER });
  const spec = { provider: PROVIDER, scopes: ['openid', 'offline_access'], authorizationParams: { prompt: 'consent' } };
  await createIntegration(kc, ns.name, 'acme', { ...spec, displayName: 'Acme workspace' }, CLIENT);
  // The provider knows the client ID but not this secret: it refuses the token exchange (invalid_client).
  await createIntegration(
    kc,
    ns.name,
    'acme-wrong',
    { ...spec, displayName: 'Acme misconfigured' },
    { ...CLIENT, clientSecret: WRONG_SECRET },
  );
  await bed.synced(
    (store) =>
      store.catalog.getProvider(PROVIDER) &&
      store.catalog.getIntegration(ns.name, 'machine') &&
      store.catalog.readSecretValue(ns.name, 'acme-client', 'clientSecret') &&
      store.catalog.readSecretValue(ns.name, 'acme-wrong-client', 'clientSecret'),
  );
});

afterAll(async () => {
  await deleteProvider(kc, CC_PROVIDER);
  await bed?.close();
});

async function userinfoStatus(accessToken: string): Promise<number> {
  return (await fetch(`${oidc.issuer}/me`, { headers: { authorization: `Bearer ${accessToken}` } })).status;
}

/** An existing connection with working tokens, metadata and configuration (what a failed reconnect must keep). */
async function existingConnection(integration: string, connectionId: string) {
  const imported = await importOAuth2(latchkey.ctx, oidc, CLIENT, ns.name, integration, PROVIDER, { connectionId });
  const name = imported.conn.resource.metadata.name;
  await latchkey.ctx.connections.updateConnection(ns.name, name, (c) => ({
    ...c,
    spec: { ...c.spec, metadata: { plan: 'gold' }, connectionConfig: { region: 'eu' } },
  }));
  const before = await eventually(() => {
    const c = latchkey.ctx.connections.getConnection(ns.name, integration, connectionId);
    return c?.resource.spec.connectionConfig?.region === 'eu' ? c : undefined;
  });
  expect(await userinfoStatus(imported.accessToken)).toBe(200);
  return { ...imported, before };
}

/** Runs a reconnect session (from the REST API, as an application backend asks for one) up to the consent page. */
async function reconnectToConsent(integration: string, connectionId: string) {
  const res = await latchkey.call('POST', '/connect/sessions/reconnect', {
    key: env.secretKey,
    body: { connection_id: connectionId, integration_id: integration },
  });
  expect(res.status).toBe(201);
  const context = await browser.newContext();
  const { app: page, popup } = await openConnectPopup(context, app.url, res.body.data.token);
  await loginAndConsent(popup);
  return { context, page, popup };
}

/** The connection's errors[] as GET /connections/{id} answers them, once one is there. */
async function errorsShown(integration: string, connectionId: string): Promise<Array<{ type: string; log_id: string }>> {
  return eventually(async () => {
    const got = await latchkey.call('GET', `/connections/${connectionId}?provider_config_key=${integration}`, { key: env.secretKey });
    expect(got.status).toBe(200);
    return got.body.errors?.length ? got.body.errors : undefined;
  });
}

/** The log entry behind a log_id (written in batches: it appears within the flush interval). */
async function logEntry(logId: string) {
  return eventually(async () => {
    const res = await latchkey.call('GET', `/logs/${encodeURIComponent(logId)}`, { key: env.secretKey });
    return res.status === 200 ? res.body : undefined;
  });
}

/** The failed reconnect changed nothing stored but the errors: same credentials, configuration, metadata. */
function expectUntouched(integration: string, connectionId: string, before: ReturnType<typeof latchkey.ctx.connections.getConnection>) {
  const after = latchkey.ctx.connections.getConnection(ns.name, integration, connectionId)!;
  expect(after.credentials).toEqual(before!.credentials);
  expect(after.resource.spec).toEqual(before!.resource.spec);
  expect(after.resource.status?.expiresAt).toBe(before!.resource.status?.expiresAt);
}

describe('a failed re-authorization', () => {
  it('after a denied consent: an auth error with a log_id that resolves, the old credentials kept and still working', async () => {
    const { before, accessToken, refreshToken } = await existingConnection('acme', 'deny-reconnect');
    const webhooksBefore = receiver.received.length;
    const { context, page, popup } = await reconnectToConsent('acme', 'deny-reconnect');
    await popup.click('text=[ Cancel ]');
    await popup.waitForSelector('text=Could not connect');
    expect(await waitForEvent(page, 'error')).toMatchObject({ providerConfigKey: 'acme', error: { code: 'access_denied' } });
    await context.close();

    const errors = await errorsShown('acme', 'deny-reconnect');
    expect(errors).toEqual([{ type: 'auth', log_id: expect.any(String) }]);
    const entry = await logEntry(errors[0]!.log_id);
    expect(entry).toMatchObject({
      id: errors[0]!.log_id,
      operation: 'authorization',
      step: 'callback',
      outcome: 'failure',
      integration: 'acme',
      connection_id: 'deny-reconnect',
    });
    expect(entry.messages.join('\n')).toContain('access_denied');
    for (const secret of [accessToken, refreshToken, CLIENT.clientSecret]) expect(JSON.stringify(entry)).not.toContain(secret);

    expectUntouched('acme', 'deny-reconnect', before);
    expect(await userinfoStatus(accessToken)).toBe(200);
    const got = await latchkey.call('GET', '/connections/deny-reconnect?provider_config_key=acme', { key: env.secretKey });
    expect(got.body.credentials.access_token).toBe(accessToken);
    expect(got.body).toMatchObject({ metadata: { plan: 'gold' }, connection_config: { region: 'eu' } });
    expect(receiver.received.length).toBe(webhooksBefore);
  });

  it("after a token exchange the provider refuses: an auth error whose log entry has the provider's answer and no secret", async () => {
    const { before, accessToken, refreshToken } = await existingConnection('acme-wrong', 'exchange-reconnect');
    const tokenCallsBefore = oidc.tokenCalls.length;
    const { context, page, popup } = await reconnectToConsent('acme-wrong', 'exchange-reconnect');
    const callbackUrl = new Promise<string>((resolve) =>
      popup.on('request', (r) => {
        if (r.url().startsWith(`${latchkey.url}/oauth/callback`)) resolve(r.url());
      }),
    );
    await popup.click('text=Continue');
    await popup.waitForSelector('text=Could not connect');
    expect(await waitForEvent(page, 'error')).toMatchObject({
      providerConfigKey: 'acme-wrong',
      error: { code: 'token_exchange_failed' },
    });
    await context.close();
    // The code was sent to the token endpoint with the wrong secret, and refused.
    expect(oidc.tokenCalls.slice(tokenCallsBefore).map((c) => c.grantType)).toContain('authorization_code');
    const code = new URL(await callbackUrl).searchParams.get('code')!;
    expect(code).toBeTruthy();

    const errors = await errorsShown('acme-wrong', 'exchange-reconnect');
    expect(errors).toEqual([{ type: 'auth', log_id: expect.any(String) }]);
    const entry = await logEntry(errors[0]!.log_id);
    expect(entry).toMatchObject({
      operation: 'authorization',
      step: 'token_exchange',
      outcome: 'failure',
      integration: 'acme-wrong',
      connection_id: 'exchange-reconnect',
    });
    expect(entry.messages.join('\n')).toContain('invalid_client');
    for (const secret of [accessToken, refreshToken, WRONG_SECRET, CLIENT.clientSecret, code])
      expect(JSON.stringify(entry)).not.toContain(secret);

    expectUntouched('acme-wrong', 'exchange-reconnect', before);
    expect(await userinfoStatus(accessToken)).toBe(200);
  });

  it('after client credentials the token endpoint refuses in a reconnect form: an auth error, the working ones kept', async () => {
    const first = await browser.newContext();
    const session = sealSession(env.secretKey, { namespace: ns.name, endUser: { id: 'm2m-user' }, allowedIntegrations: ['machine'] });
    const opened = await openConnectPopup(first, app.url, session);
    await opened.popup.fill('#f-values-clientId', CLIENT.clientId);
    await opened.popup.fill('#f-values-clientSecret', CLIENT.clientSecret);
    await opened.popup.click('button[type=submit]');
    const connectionId = (await waitForEvent(opened.app, 'connect')).connectionId!;
    await first.close();
    const before = await eventually(() => latchkey.ctx.connections.getConnection(ns.name, 'machine', connectionId));

    const res = await latchkey.call('POST', '/connect/sessions/reconnect', {
      key: env.secretKey,
      body: { connection_id: connectionId, integration_id: 'machine' },
    });
    expect(res.status).toBe(201);
    const context = await browser.newContext();
    const { popup } = await openConnectPopup(context, app.url, res.body.data.token);
    await popup.fill('#f-values-clientId', CLIENT.clientId);
    await popup.fill('#f-values-clientSecret', WRONG_SECRET);
    await popup.click('button[type=submit]');
    await popup.waitForSelector('.form-error:not([hidden])');
    expect(await popup.textContent('.form-error')).toContain('did not accept');
    await context.close();

    const errors = await errorsShown('machine', connectionId);
    expect(errors).toEqual([{ type: 'auth', log_id: expect.any(String) }]);
    const entry = await logEntry(errors[0]!.log_id);
    expect(entry).toMatchObject({ operation: 'authorization', step: 'form', outcome: 'failure', connection_id: connectionId });
    expect(entry.messages.join('\n')).toContain('invalid_client');
    for (const secret of [WRONG_SECRET, CLIENT.clientSecret, before.credentials.token as string])
      expect(JSON.stringify(entry)).not.toContain(secret);
    expectUntouched('machine', connectionId, before);
  });

  it('a first connect whose token exchange is refused stores nothing and touches no other connection', async () => {
    await existingConnection('acme-wrong', 'bystander');
    const connectionsBefore = latchkey.ctx.connectionScans.listConnections(ns.name).map((c) => c.metadata.name);
    const webhooksBefore = receiver.received.length;
    const context = await browser.newContext();
    const token = sealSession(env.secretKey, { namespace: ns.name, endUser: { id: 'first-timer' }, allowedIntegrations: ['acme-wrong'] });
    const { app: page, popup } = await openConnectPopup(context, app.url, token);
    await loginAndConsent(popup);
    await popup.click('text=Continue');
    expect(await waitForEvent(page, 'error')).toMatchObject({ error: { code: 'token_exchange_failed' } });
    await context.close();

    expect(latchkey.ctx.connectionScans.listConnections(ns.name).map((c) => c.metadata.name)).toEqual(connectionsBefore);
    expect(latchkey.ctx.connections.getConnection(ns.name, 'acme-wrong', 'bystander')!.resource.status?.errors ?? []).toEqual([]);
    expect(receiver.received.length).toBe(webhooksBefore);
    // The attempt is still in the log (the environment's ring: there is no connection to hang it on).
    const found = await eventually(async () => {
      const res = await latchkey.call('GET', '/logs?integration=acme-wrong&end_user_id=first-timer&outcome=failure', {
        key: env.secretKey,
      });
      return res.body.logs?.[0];
    });
    expect(found).toMatchObject({ operation: 'authorization', step: 'token_exchange', connection_id: null });
  });
});
