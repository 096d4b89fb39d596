/**
 * One grant, several accounts (issue #57): the shipped Jira and Xero manifests (`several: choose`) against
 * simulators written from the providers' docs, whose grant covers two Atlassian sites
 * (accessible-resources, https://developer.atlassian.com/cloud/oauth/getting-started/making-calls-to-api)
 * and two Xero organisations (GET /connections, https://developer.xero.com/documentation/guides/oauth2/auth-flow).
 * In Chromium the end user chooses one on the callback's page; the connection stores the chosen one; a
 * reconnect preselects the current one and refuses another (`different_account`); a choice not offered,
 * from another browser or made twice is refused with a 4xx; an import takes the value from the caller.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { firstOutcome, openConnectPopup, type ClientEvent } from '../support/browser.js';
import type { ConnectBed } from '../support/connect-bed.js';
import { startSimulatedProvidersBed, type SimulatedProvidersBed } from '../support/simulated-providers-bed.js';
import { hostMatches, type ProviderSimulator } from '../support/simulators/framework.js';
import { jira } from '../support/simulators/atlassian.js';
import { xero } from '../support/simulators/xero.js';

const kc = testKubeConfig();
const SITES = [
  { id: '1324a887-45db-1bf4-1e99-ef0ff456d421', name: 'Acme', url: 'https://acme.atlassian.net' },
  { id: '5f1c2e7a-0b9d-4c3e-8a61-2d7f9b4e0c13', name: 'Globex Support', url: 'https://globex.atlassian.net' },
];
const TENANTS = [
  { tenantId: '70784a63-d24b-46a9-a4db-0e70a274b056', tenantName: 'Maple Florists' },
  { tenantId: 'b2f5c0d1-6e3a-4f87-9c21-5a8d7e6f4b90', tenantName: 'Birch Bakery' },
];
const sims = { jira: jira(SITES), xero: xero(TENANTS) };
let providers: SimulatedProvidersBed;
let bed: ConnectBed;

beforeAll(async () => {
  providers = await startSimulatedProvidersBed(kc, 'account-choice', Object.values(sims));
  ({ bed } = providers);
}, 300_000);

afterAll(async () => {
  await providers?.close();
});

const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  providers.callJson(method, path, body, headers);
const sessionToken = (integration: string, endUser: string): Promise<string> => providers.sessionToken(integration, endUser);

async function reconnectToken(integration: string, connectionId: string): Promise<string> {
  const res = await call('POST', '/connect/sessions/reconnect', { connection_id: connectionId, integration_id: integration });
  expect(res.status).toBe(201);
  return res.body.data.token as string;
}

const outcome = (page: Page): Promise<ClientEvent> => firstOutcome(page);

/** Through the Connect UI and the provider's consent page, up to the callback's choice page. */
async function toChoice(context: BrowserContext, sim: ProviderSimulator, token: string): Promise<{ app: Page; popup: Page }> {
  const { app, popup } = await openConnectPopup(context, bed.app.url, token);
  await popup.waitForURL((u) => sim.hosts.some((h) => hostMatches(h, u.hostname)), { timeout: 30_000 });
  await popup.click('#allow');
  await popup.waitForSelector('input[name=account]', { timeout: 30_000 });
  return { app, popup };
}

const connectionsOf = (integration: string, endUser: string) =>
  bed.latchkey.ctx.connectionScans
    .listConnections(bed.ns.name)
    .filter((c) => c.spec.integration === integration && c.spec.endUser?.id === endUser);

describe('Jira: a grant for two Atlassian sites', () => {
  let connectionId: string;

  it('lists both sites by name and URL, without internal words; the connection stores the one the end user chose', async () => {
    const context = await bed.browser.newContext();
    try {
      const { app, popup } = await toChoice(context, sims.jira, await sessionToken('jira', 'two-sites'));
      const text = await popup.innerText('body');
      expect(text).toContain('Choose your Jira account');
      for (const site of SITES) {
        expect(text).toContain(site.name);
        expect(text).toContain(site.url);
      }
      expect(text).not.toMatch(/\b(step|sites)\b/i);
      // Nothing is stored before the choice, and the page holds no token.
      expect(connectionsOf('jira', 'two-sites')).toEqual([]);
      const html = await popup.content();
      for (const token of sims.jira.state.accessTokens) expect(html).not.toContain(token);
      expect(await popup.locator('input[name=account]:checked').count()).toBe(0);

      await popup.click(`text=${SITES[1]!.name}`);
      await popup.click('button[type=submit]');
      const event = await outcome(app);
      expect(event).toMatchObject({ type: 'connect', providerConfigKey: 'jira' });
      connectionId = event.connectionId!;
    } finally {
      await context.close();
    }
    const fetched = await call('GET', `/connections/${encodeURIComponent(connectionId)}?provider_config_key=jira`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.connection_config).toEqual({ cloudId: SITES[1]!.id, siteHost: 'globex.atlassian.net' });
    expect(fetched.body.credentials.access_token).toBe(sims.jira.state.accessTokens.at(-1));
    // The proxy goes to the chosen site's API.
    const before = sims.jira.state.requests.length;
    const proxied = await call('GET', '/proxy/rest/api/3/project/search', undefined, {
      'connection-id': connectionId,
      'provider-config-key': 'jira',
    });
    expect(proxied.status).toBe(200);
    expect(sims.jira.state.requests.slice(before).map((r) => r.path)).toContain(`/ex/jira/${SITES[1]!.id}/rest/api/3/project/search`);
  });

  it('a reconnect preselects the current site, refuses another one (different_account) and keeps the chosen one', async () => {
    const before = bed.latchkey.ctx.connections.getConnection(bed.ns.name, 'jira', connectionId)!;
    const context = await bed.browser.newContext();
    try {
      const { app, popup } = await toChoice(context, sims.jira, await reconnectToken('jira', connectionId));
      expect(await popup.locator('input[name=account]:checked').getAttribute('value')).toBe(SITES[1]!.id);

      // Another site: refused, the list stays for another choice, nothing changes.
      await popup.click(`text=${SITES[0]!.name}`);
      await popup.click('button[type=submit]');
      await popup.waitForSelector('.form-error:not([hidden])');
      expect(await popup.innerText('.form-error')).toContain('another Jira account');
      const kept = bed.latchkey.ctx.connections.getConnection(bed.ns.name, 'jira', connectionId)!;
      expect(kept.credentials.access_token).toBe(before.credentials.access_token);

      await popup.click(`text=${SITES[1]!.name}`);
      await popup.click('button[type=submit]');
      expect(await outcome(app)).toMatchObject({ type: 'connect', providerConfigKey: 'jira' });
    } finally {
      await context.close();
    }
    const renewed = await eventually(() => {
      const c = bed.latchkey.ctx.connections.getConnection(bed.ns.name, 'jira', connectionId);
      return c && c.credentials.access_token !== before.credentials.access_token ? c : undefined;
    });
    expect(renewed.credentials.access_token).toBe(sims.jira.state.accessTokens.at(-1));
    expect(renewed.resource.spec.connectionConfig).toEqual({ cloudId: SITES[1]!.id, siteHost: 'globex.atlassian.net' });
  });

  it('refuses a choice not offered, one from another browser, and a second use, with a 4xx', async () => {
    const context = await bed.browser.newContext();
    try {
      const { app, popup } = await toChoice(context, sims.jira, await sessionToken('jira', 'hostile'));
      const handle = await popup.evaluate(
        () => (JSON.parse(document.getElementById('latchkey-choice')!.textContent!) as { choice: string }).choice,
      );
      const post = (account: string) =>
        popup.evaluate(
          async ([choice, value]) => {
            const res = await fetch('/connect/api/oauth/choose', {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ choice, account: value }),
            });
            return { status: res.status, body: (await res.json()) as { error?: { code: string } } };
          },
          [handle, account] as const,
        );
      // A cloud ID the grant does not cover (a hostile end user's edit): 400, the choice still open.
      const evil = await post('00000000-0000-4000-8000-000000000000');
      expect(evil).toMatchObject({ status: 400, body: { error: { code: 'invalid_account_choice' } } });
      // From another browser (no binding cookie): 403.
      const elsewhere = await call('POST', '/connect/api/oauth/choose', { choice: handle, account: SITES[0]!.id }, { authorization: '' });
      expect(elsewhere).toMatchObject({ status: 403, body: { error: { code: 'browser_mismatch' } } });
      // A forged handle: 400.
      const forged = await call('POST', '/connect/api/oauth/choose', { choice: `${handle.slice(0, -4)}AAAA`, account: SITES[0]!.id });
      expect(forged.status).toBe(400);
      expect(connectionsOf('jira', 'hostile')).toEqual([]);

      // The end user's own choice still works, once.
      await popup.click(`text=${SITES[0]!.name}`);
      await popup.click('button[type=submit]');
      expect(await outcome(app)).toMatchObject({ type: 'connect', providerConfigKey: 'jira' });
      const again = await post(SITES[1]!.id);
      expect(again).toMatchObject({ status: 400, body: { error: { code: 'account_choice_expired' } } });
    } finally {
      await context.close();
    }
    const stored = connectionsOf('jira', 'hostile');
    expect(stored.map((c) => c.spec.connectionConfig)).toEqual([{ cloudId: SITES[0]!.id, siteHost: 'acme.atlassian.net' }]);
  });

  it('an import takes the site from the caller; without it, 400 names the key and the sites', async () => {
    const token = sims.jira.state.accessTokens.at(-1)!;
    const given = await call('POST', '/connections', {
      provider_config_key: 'jira',
      connection_id: 'imported-site',
      credentials: { type: 'OAUTH2', access_token: token },
      connection_config: { cloudId: SITES[1]!.id, siteHost: 'globex.atlassian.net' },
    });
    expect(given.status).toBe(201);
    expect(bed.latchkey.ctx.connections.getConnection(bed.ns.name, 'jira', 'imported-site')!.resource.spec.connectionConfig).toEqual({
      cloudId: SITES[1]!.id,
      siteHost: 'globex.atlassian.net',
    });

    const missing = await call('POST', '/connections', {
      provider_config_key: 'jira',
      connection_id: 'imported-no-site',
      credentials: { type: 'OAUTH2', access_token: token },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('account_choice_needed');
    expect(missing.body.error.errors[0].path).toBe('connection_config.cloudId');
    for (const site of SITES) expect(missing.body.error.errors[0].message).toContain(site.id);
    expect(JSON.stringify(missing.body)).not.toContain(token);
    expect(bed.latchkey.ctx.connections.getConnection(bed.ns.name, 'jira', 'imported-no-site')).toBeUndefined();
  });
});

describe('Xero: an authorization for two organisations', () => {
  it('the end user chooses the organisation by name; the connection and the proxy use its tenant ID', async () => {
    const context = await bed.browser.newContext();
    let connectionId: string;
    try {
      const { app, popup } = await toChoice(context, sims.xero, await sessionToken('xero', 'two-orgs'));
      const text = await popup.innerText('body');
      expect(text).toContain('Choose your Xero account');
      for (const t of TENANTS) expect(text).toContain(t.tenantName);
      await popup.click(`text=${TENANTS[1]!.tenantName}`);
      await popup.click('button[type=submit]');
      const event = await outcome(app);
      expect(event).toMatchObject({ type: 'connect', providerConfigKey: 'xero' });
      connectionId = event.connectionId!;
    } finally {
      await context.close();
    }
    const fetched = await call('GET', `/connections/${encodeURIComponent(connectionId)}?provider_config_key=xero`);
    expect(fetched.body.connection_config).toEqual({ tenantId: TENANTS[1]!.tenantId });
    const proxied = await call('GET', '/proxy/api.xro/2.0/Organisation', undefined, {
      'connection-id': connectionId,
      'provider-config-key': 'xero',
    });
    expect(proxied).toMatchObject({
      status: 200,
      body: { Organisations: [{ OrganisationID: TENANTS[1]!.tenantId, Name: 'Birch Bakery' }] },
    });
  });

  it('the choice page speaks the end user’s language', async () => {
    const context = await bed.browser.newContext({ locale: 'de-DE', extraHTTPHeaders: { 'accept-language': 'de-DE,de;q=0.9' } });
    try {
      const { popup } = await toChoice(context, sims.xero, await sessionToken('xero', 'two-orgs-de'));
      const text = await popup.innerText('body');
      expect(text).toContain('Wählen Sie Ihr Xero-Konto');
      expect(text).not.toMatch(/\b(step|sites|Schritt)\b/i);
    } finally {
      await context.close();
    }
  });
});
