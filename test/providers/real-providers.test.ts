/**
 * Real providers as their docs describe them (issue #43): each shipped manifest (config/providers) is
 * applied unchanged and its hosts answered by a loopback simulator written from the provider's docs
 * (test/support/simulators). Per provider, in one Chromium (a context each): connect through the Connect
 * UI without typing anything the provider returns, fetch the connection, call the documented API path
 * through the proxy, force a refresh where the provider refreshes, and provoke one documented error (a
 * denied consent or a refused code) that fails the flow and stores nothing.
 */
import type { Page } from 'playwright-core';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { firstOutcome, openConnectPopup, type ClientEvent } from '../support/browser.js';
import type { ConnectBed } from '../support/connect-bed.js';
import { startSimulatedProvidersBed, type SimulatedProvidersBed } from '../support/simulated-providers-bed.js';
import { hostMatches, paramsOf, type ProviderSimulator } from '../support/simulators/framework.js';
import { SIMULATORS } from '../support/simulators/index.js';

const kc = testKubeConfig();
const sims: ProviderSimulator[] = SIMULATORS.map((make) => make());
let providers: SimulatedProvidersBed;
let bed: ConnectBed;

beforeAll(async () => {
  providers = await startSimulatedProvidersBed(kc, 'real-providers', sims);
  ({ bed } = providers);
}, 300_000);

afterAll(async () => {
  await providers?.close();
});

const call = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
  providers.call(method, path, { headers, ...(body !== undefined ? { body } : {}) });
const sessionToken = (integration: string, endUser: string): Promise<string> => providers.sessionToken(integration, endUser);

const outcome = (page: Page): Promise<ClientEvent> => firstOutcome(page);

/** Runs the Connect UI for `sim` up to the provider's consent page, then clicks `choice` there. */
async function connectThroughUi(sim: ProviderSimulator, endUser: string, choice: 'allow' | 'deny') {
  const context = await bed.browser.newContext();
  try {
    const { app: page, popup } = await openConnectPopup(context, bed.app.url, await sessionToken(sim.manifest, endUser));
    if (sim.e2e.typed) {
      for (const [name, value] of Object.entries(sim.e2e.typed)) await popup.fill(`input[name="${name}"]`, value);
      await popup.click('button[type=submit]');
    }
    // The provider's page, or the Connect page's error before it (then where the popup stopped says why).
    const reached = await Promise.race([
      popup
        .waitForURL((u) => sim.hosts.some((h) => hostMatches(h, u.hostname)), { timeout: 30_000 })
        .then(
          () => true,
          () => false,
        ),
      popup.waitForSelector('text=Could not connect', { timeout: 30_000 }).then(
        () => false,
        () => false,
      ),
    ]);
    if (!reached)
      throw new Error(`the popup did not reach ${sim.manifest}: at ${popup.url()}: ${await popup.innerText('body').catch(() => '')}`);
    await popup.click(`#${choice}`);
    const event = await outcome(page);
    const text = event.type === 'error' ? await popup.innerText('body').catch(() => '') : '';
    return { event, text };
  } finally {
    await context.close();
  }
}

/** The connection's token: OAuth 2's access token, OAuth 1's token credential (simulators list both in `accessTokens`). */
const tokenOf = (credentials: { access_token?: string; oauth_token?: string }) => credentials.access_token ?? credentials.oauth_token;

const connectionsOf = (integration: string) =>
  bed.latchkey.ctx.connectionScans.listConnections(bed.ns.name).filter((c) => c.spec.integration === integration);

describe.each(sims.map((s) => [s.manifest, s] as const))('%s, as its docs describe it', (_name, sim) => {
  it('connects through the Connect UI with the configuration filled from the provider, fetches, proxies the documented call and refreshes', async () => {
    const { event, text } = await connectThroughUi(sim, `user-${sim.manifest}`, 'allow');
    // On a failure, the page's text and the error code say why.
    expect({ ...event, text }).toMatchObject({ type: 'connect', providerConfigKey: sim.manifest, text: '' });
    const connectionId = event.connectionId!;
    await eventually(() => bed.latchkey.ctx.connections.getConnection(bed.ns.name, sim.manifest, connectionId));

    const fetched = await call('GET', `/connections/${encodeURIComponent(connectionId)}?provider_config_key=${sim.manifest}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.connection_config).toEqual(sim.e2e.expectConfig);
    const issued = sim.state.accessTokens.at(-1);
    expect(tokenOf(fetched.body.credentials)).toBe(issued);
    if (sim.e2e.credentials) expect(fetched.body.credentials).toMatchObject(sim.e2e.credentials());

    const api = sim.e2e.api;
    /** The documented API call, through the proxy with the connection's credentials. */
    const callApi = () =>
      call(
        api.method,
        `/proxy${api.path}`,
        { 'connection-id': connectionId, 'provider-config-key': sim.manifest, ...(api.headers ?? {}) },
        api.body,
      );
    const before = sim.state.requests.length;
    const proxied = await callApi();
    // The simulator's documented answer, which it gives only to the connection's token.
    expect({ status: proxied.status, body: proxied.body }).toMatchObject({ status: 200, body: api.answer });
    const seen = sim.state.requests.slice(before);
    expect(seen.map((r) => `${r.method} ${r.path}`).some((p) => p.endsWith(new URL(api.path, 'https://x').pathname))).toBe(true);

    if (sim.e2e.refreshes) {
      const refreshed = await call(
        'GET',
        `/connections/${encodeURIComponent(connectionId)}?provider_config_key=${sim.manifest}&force_refresh=true`,
      );
      expect(refreshed.status).toBe(200);
      expect(sim.state.requests.some((r) => paramsOf(r).get('grant_type') === 'refresh_token')).toBe(true);
      expect(tokenOf(refreshed.body.credentials)).toBe(sim.state.accessTokens.at(-1));
      expect(tokenOf(refreshed.body.credentials)).not.toBe(issued);
      expect(refreshed.body.connection_config).toEqual(sim.e2e.expectConfig);
      if (sim.e2e.credentials) expect(refreshed.body.credentials).toMatchObject(sim.e2e.credentials());
      // The proxy now sends the refreshed token, which the simulator accepts.
      const again = await callApi();
      expect({ status: again.status, body: again.body }).toMatchObject({ status: 200, body: api.answer });
    }
  });

  it(`fails clearly and stores nothing on a documented error (${sim.e2e.failure})`, async () => {
    const endUser = `refused-${sim.manifest}`;
    const stored = () => connectionsOf(sim.manifest).filter((c) => c.spec.endUser?.id === endUser);
    if (sim.e2e.failure === 'refused-code') sim.state.refuseNextCode = true;
    const { event, text } = await connectThroughUi(sim, endUser, sim.e2e.failure === 'denied' ? 'deny' : 'allow');
    expect(event).toMatchObject({ type: 'error', providerConfigKey: sim.manifest });
    expect(event.error?.code).toBeTruthy();
    expect(text).toContain('Could not connect');
    expect(stored()).toEqual([]);
    // The documented error is what failed it: the token endpoint took the code and refused it.
    if (sim.e2e.failure === 'refused-code') expect(sim.state.refuseNextCode).toBe(false);
  });
});
