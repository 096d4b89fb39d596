/**
 * Simulated providers (support/simulators) on their loopback host, and a Connect bed that reaches them
 * (egress guard and Chromium pointed at the host): each simulator's shipped manifest applied unchanged,
 * under its shipped name, and an Integration of it with the simulator's client, synced into the replica.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { applyProvider, createIntegration } from '../../dev/fixtures.js';
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
