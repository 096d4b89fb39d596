/**
 * A BASIC provider whose docs fix the user name (`spec.basic.fixed`): Affinity API v1 takes the API key as the
 * password with no user name (https://api-docs.affinity.co/#authentication). In Chromium, the shipped manifest's
 * Connect form shows the key field alone, submits, and a proxied call carries `Basic base64(":" + key)` to the
 * doc-true simulator (support/simulators/affinity.ts), which refuses any other header. Import as Nango's SDKs send
 * BASIC (`username` and `password`, the user name empty) keeps working; a key in the fixed field is a clear 400.
 */
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration } from '../../dev/fixtures.js';
import { openConnectPopup, waitForEvent } from '../support/browser.js';
import { catalogSpec } from '../support/catalog-files.js';
import { startConnectBed, type ConnectBed } from '../support/connect-bed.js';
import { sessionFor } from '../support/fixtures.js';
import { affinity } from '../support/simulators/affinity.js';
import { startSimulators, type SimulatorHost } from '../support/simulators/framework.js';

const kc = testKubeConfig();
const sim = affinity();
let host: SimulatorHost;
let bed: ConnectBed;

beforeAll(async () => {
  host = await startSimulators([sim]);
  bed = await startConnectBed(kc, 'basic-fixed', 'development', { egress: host.egressGuard(), browserArgs: host.chromiumArgs() });
  // The shipped manifest, unchanged; BASIC needs no client.
  await applyProvider(kc, 'affinity', catalogSpec('affinity'));
  await createIntegration(kc, bed.ns.name, 'affinity', { provider: 'affinity' });
  await bed.synced((store) => store.catalog.getProvider('affinity') && store.catalog.getIntegration(bed.ns.name, 'affinity'));
}, 120_000);

afterAll(async () => {
  await bed?.close();
  await host?.close();
});

const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  bed.latchkey.call(method, path, { key: bed.env.secretKey, headers, ...(body !== undefined ? { body } : {}) });
const whoami = (connectionId: string) =>
  api('GET', '/proxy/auth/whoami', undefined, { 'connection-id': connectionId, 'provider-config-key': 'affinity' });
const documentedHeader = (key: string) => `Basic ${Buffer.from(`:${key}`, 'utf8').toString('base64')}`;

describe('Affinity v1: the user name fixed empty by its docs', () => {
  it('shows only the API key field in Chromium, connects, and the proxy sends Basic base64(":" + key)', async () => {
    const context = await bed.browser.newContext();
    try {
      const { app: page, popup } = await openConnectPopup(
        context,
        bed.app.url,
        sessionFor(bed.env.secretKey, bed.ns.name, 'aff-user', ['affinity']),
      );
      await popup.waitForSelector('form');
      const inputs = await popup.locator('form input').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).name));
      expect(inputs).toEqual(['password']);
      expect(await popup.textContent('form')).toContain('API key');
      expect(await popup.textContent('form')).not.toMatch(/leave empty/i);
      expect(await popup.getAttribute('#f-values-password', 'type')).toBe('password');
      // The key is required: an empty form is refused in the page.
      await popup.click('button[type=submit]');
      expect(await popup.textContent('#f-values-password-error')).toBe('Required');

      await popup.fill('#f-values-password', sim.apiKey);
      await popup.click('button[type=submit]');
      const event = await waitForEvent(page, 'connect');
      const connectionId = event.connectionId!;
      const stored = await eventually(() => bed.latchkey.ctx.connections.getConnection(bed.ns.name, 'affinity', connectionId));
      expect(stored.credentials).toEqual({ type: 'BASIC', username: '', password: sim.apiKey });

      const before = sim.state.requests.length;
      const proxied = await whoami(connectionId);
      expect({ status: proxied.status, body: proxied.body }).toMatchObject({ status: 200, body: { tenant: { subdomain: 'contoso' } } });
      expect(sim.state.requests.slice(before).map((r) => [r.path, r.headers.authorization])).toEqual([
        ['/auth/whoami', documentedHeader(sim.apiKey)],
      ]);
    } finally {
      await context.close();
    }
  });

  it("imports as Nango's SDKs send BASIC (an empty user name) or with the key alone; refuses the key in the user name", async () => {
    const imported = await api('POST', '/connections', {
      provider_config_key: 'affinity',
      connection_id: 'sdk-both',
      credentials: { type: 'BASIC', username: '', password: sim.apiKey },
    });
    expect(imported.status).toBe(201);
    const keyOnly = await api('POST', '/connections', {
      provider_config_key: 'affinity',
      connection_id: 'key-only',
      credentials: { type: 'BASIC', password: sim.apiKey },
    });
    expect(keyOnly.status).toBe(201);
    for (const id of ['sdk-both', 'key-only']) {
      const proxied = await whoami(id);
      expect([id, proxied.status]).toEqual([id, 200]);
    }

    const wrong = await api('POST', '/connections', {
      provider_config_key: 'affinity',
      connection_id: 'key-as-user',
      credentials: { type: 'BASIC', username: sim.apiKey, password: '' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toMatchObject({ code: 'fixed_by_provider', errors: [{ path: 'body.credentials.username' }] });
    expect(JSON.stringify(wrong.body)).not.toContain(sim.apiKey);
    expect(bed.latchkey.ctx.connections.getConnection(bed.ns.name, 'affinity', 'key-as-user')).toBeUndefined();
  });

  it('is refused by the simulator with any other header (the key as the user name)', async () => {
    const whoamiRoute = sim.routes.find((r) => r.path === '/auth/whoami')!;
    for (const authorization of [
      `Basic ${Buffer.from(`${sim.apiKey}:`, 'utf8').toString('base64')}`,
      `Basic ${Buffer.from(`:wrong`, 'utf8').toString('base64')}`,
    ]) {
      const answer = await whoamiRoute.handler({
        method: 'GET',
        host: 'api.affinity.co',
        path: '/auth/whoami',
        query: new URLSearchParams(),
        headers: { authorization },
        body: '',
        form: new URLSearchParams(),
      });
      expect([authorization, answer.status]).toEqual([authorization, 401]);
    }
  });
});
