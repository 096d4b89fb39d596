/**
 * What the auth-mode suites (test/auth-modes/) run against: the Connect bed (a Latchkey server with the
 * REST API, the proxy and the Connect UI, the application page, chromium) in development mode, a
 * loopback upstream for the provider's fake peer, and the calls every mode's test makes: REST with the
 * secret key, a proxied GET, and connecting through the Connect UI form in chromium.
 */
import type { ProviderSpec } from '../../src/k8s/resources.js';
import type { StoredCredentials } from '../../src/k8s/store.js';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { type ImportCall, importCalls, proxyClient, restClient } from './api-clients.js';
import { openConnectPopup, waitForEvent } from './browser.js';
import { startConnectBed, type ConnectBed } from './connect-bed.js';
import { sealSession } from './fixtures.js';
import { startUpstream, type Upstream } from './servers/upstream.js';

export { catalogSpec } from './catalog-files.js';

export interface AuthModeBed {
  bed: ConnectBed;
  namespace: string;
  up: Upstream;
  /** Applies a Provider (name made unique) and an Integration `id` using it; waits until both are cached. */
  addIntegration(id: string, provider: string, spec: ProviderSpec): Promise<void>;
  rest(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** POST /connections naming the connection. */
  importConnection: ImportCall;
  /** The deprecated POST /connection naming the connection. */
  importLegacy: ImportCall;
  proxyGet(integration: string, connectionId: string, path: string): Promise<{ status: number; body: any }>;
  stored(integration: string, connectionId: string): StoredCredentials | undefined;
  /** Makes the stored credentials expire `ms` from now (as time would); returns them as they were. */
  expireIn(integration: string, connectionId: string, ms: number): Promise<StoredCredentials>;
  /** Replaces the stored credentials (to make a token expired, as time would). */
  setStored(integration: string, connectionId: string, credentials: StoredCredentials): Promise<void>;
  /** Connects through the Connect UI form in chromium; returns the new connection ID (development mode). */
  connectWithForm(integration: string, values: Record<string, string>, config?: Record<string, string>): Promise<string>;
  /** Submits the form in chromium and returns the error text the page shows (nothing is connected). */
  formError(integration: string, values: Record<string, string>, config?: Record<string, string>): Promise<string>;
  close(): Promise<void>;
}

export async function startAuthModeBed(prefix: string): Promise<AuthModeBed> {
  const kc = testKubeConfig();
  const bed = await startConnectBed(kc, prefix, 'development');
  const up = await startUpstream();
  const namespace = bed.ns.name;
  const store = bed.latchkey.ctx;
  const providers: string[] = [];
  const suffix = `${process.pid}`;
  const server = { url: bed.latchkey.url, env: bed.env };
  const rest = restClient(server);

  const openForm = async (integration: string, values: Record<string, string>, config: Record<string, string>) => {
    const context = await bed.browser.newContext();
    const token = sealSession(bed.env.secretKey, { namespace, endUser: { id: `${integration}-user` }, allowedIntegrations: [integration] });
    const { app, popup } = await openConnectPopup(context, bed.app.url, token);
    await popup.waitForSelector('form');
    for (const [k, v] of Object.entries(values)) await popup.fill(`#f-values-${k}`, v);
    for (const [k, v] of Object.entries(config)) await popup.fill(`#f-config-${k}`, v);
    await popup.click('button[type=submit]');
    return { context, app, popup };
  };

  const stored = (integration: string, connectionId: string) =>
    store.connections.getConnection(namespace, integration, connectionId)?.credentials;
  const setStored = async (integration: string, connectionId: string, credentials: StoredCredentials) => {
    const name = store.connections.getConnection(namespace, integration, connectionId)!.resource.metadata.name;
    await store.connections.updateCredentials(namespace, name, () => credentials);
  };

  return {
    bed,
    namespace,
    up,
    async addIntegration(id, provider, spec) {
      const name = `${provider}-${suffix}`;
      providers.push(name);
      await applyProvider(kc, name, spec);
      await createIntegration(kc, namespace, id, { provider: name });
      await bed.synced((s) => s.catalog.getProvider(name) && s.catalog.getIntegration(namespace, id));
    },
    rest,
    ...importCalls(rest),
    proxyGet: (integration, connectionId, path) => proxyClient(server, integration)(connectionId, path),
    stored,
    async expireIn(integration, connectionId, ms) {
      const before = stored(integration, connectionId)!;
      await setStored(integration, connectionId, { ...before, expires_at: new Date(Date.now() + ms).toISOString() } as StoredCredentials);
      return before;
    },
    setStored,
    async connectWithForm(integration, values, config = {}) {
      const { context, app } = await openForm(integration, values, config);
      const event = await waitForEvent(app, 'connect', 60_000);
      await context.close();
      const connectionId = event.connectionId!;
      await eventually(() => store.connections.getConnection(namespace, integration, connectionId));
      return connectionId;
    },
    async formError(integration, values, config = {}) {
      const { context, popup } = await openForm(integration, values, config);
      const el = await popup.waitForSelector('p.form-error:not([hidden])', { timeout: 60_000 });
      const text = (await el.textContent()) ?? '';
      await context.close();
      return text;
    },
    async close() {
      await up.close();
      for (const p of providers) await deleteProvider(kc, p);
      await bed.close();
    },
  };
}
