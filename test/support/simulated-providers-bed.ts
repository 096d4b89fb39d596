/**
 * Simulated providers (support/simulators) on their loopback host, and a Connect bed that reaches them
 * (egress guard and Chromium pointed at the host): each simulator's shipped manifest applied unchanged,
 * under its shipped name, and an Integration of it with the simulator's client, synced into the replica.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Page } from 'playwright-core';
import { applyProvider, createIntegration } from '../../dev/fixtures.js';
import { firstOutcome, openConnectPopup } from './browser.js';
import { catalogSpec } from './catalog-files.js';
import { startConnectBed, type ConnectBed } from './connect-bed.js';
import { startSimulators, type ProviderSimulator, type SimulatorHost } from './simulators/framework.js';

export interface SimulatedProvidersBed {
  host: SimulatorHost;
  bed: ConnectBed;
  /** Latchkey's API with the Environment's secret key: the status, and the body parsed when it is JSON. */
  call(method: string, path: string, init?: { headers?: Record<string, string>; body?: string }): Promise<{ status: number; body: any }>;
  /** {@link call} with a JSON body (when given) and more headers. */
  callJson(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  /** A Connect session's token for `endUser` and one Integration. */
  sessionToken(integration: string, endUser: string): Promise<string>;
  /**
   * An end user connects in Chromium: the Connect UI's popup goes to the provider's consent page on `consentHost`
   * (`atConsent` looks at it first), which they allow; the new connection's ID.
   */
  connectInPopup(integration: string, endUser: string, consentHost: string, atConsent?: (popup: Page) => unknown): Promise<string>;
  /** The Connect UI's OAuth start for a new end user of `integration`, `connectionConfig` as the page sends it. */
  connectStart(integration: string, connectionConfig?: Record<string, string>): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function startSimulatedProvidersBed(
  kc: KubeConfig,
  prefix: string,
  sims: ProviderSimulator[],
): Promise<SimulatedProvidersBed> {
  const host = await startSimulators(sims);
  const bed = await startConnectBed(kc, prefix, 'development', { egress: host.egressGuard(), browserArgs: host.chromiumArgs() });
  for (const sim of sims) {
    // A provider that registers a name for the callback URL (eBay's RuName) learns where it points.
    sim.e2e.registerCallback?.(`${bed.latchkey.url}/oauth/callback`);
    // Only the hosts' addresses differ from production (the egress guard's resolver).
    await applyProvider(kc, sim.manifest, catalogSpec(sim.manifest));
    await createIntegration(
      kc,
      bed.ns.name,
      sim.manifest,
      { provider: sim.manifest, ...(sim.e2e.scopes ? { scopes: sim.e2e.scopes } : {}), ...(sim.e2e.integration ?? {}) },
      { ...sim.client },
    );
  }
  await bed.synced((store) =>
    sims.every(
      (s) =>
        store.catalog.getProvider(s.manifest) &&
        store.catalog.getIntegration(bed.ns.name, s.manifest) &&
        store.catalog.readSecretValue(bed.ns.name, `${s.manifest}-client`, 'clientId'),
    ),
  );
  const call: SimulatedProvidersBed['call'] = async (method, path, init = {}) => {
    const res = await fetch(`${bed.latchkey.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${bed.env.secretKey}`, ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {}),
    });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: the assertion shows the text
    }
    return { status: res.status, body: parsed };
  };
  async function sessionToken(integration: string, endUser: string): Promise<string> {
    const body = JSON.stringify({ end_user: { id: endUser }, allowed_integrations: [integration] });
    const res = await call('POST', '/connect/sessions', { headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(201);
    return res.body.data.token as string;
  }
  return {
    host,
    bed,
    call,
    callJson: (method, path, body, headers = {}) =>
      call(method, path, {
        headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      }),
    sessionToken,
    async connectInPopup(integration, endUser, consentHost, atConsent) {
      const context = await bed.browser.newContext();
      try {
        const { app, popup } = await openConnectPopup(context, bed.app.url, await sessionToken(integration, endUser));
        await popup.waitForURL((u) => u.hostname === consentHost, { timeout: 30_000 });
        await atConsent?.(popup);
        await popup.click('#allow');
        const event = await firstOutcome(app);
        expect(event).toMatchObject({ type: 'connect', providerConfigKey: integration });
        return event.connectionId!;
      } finally {
        await context.close();
      }
    },
    async connectStart(integration, connectionConfig = {}) {
      const session = await sessionToken(integration, `starter-${Math.random().toString(36).slice(2)}`);
      const res = await fetch(`${bed.latchkey.url}/connect/api/oauth/start`, {
        method: 'POST',
        headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
        body: JSON.stringify({ integration, connectionConfig }),
      });
      return { status: res.status, body: await res.json() };
    },
    close: () => bed.close().then(() => host.close()),
  };
}
