/**
 * The embedded Connect UI tests' bed (connect/iframe, connect/nango-frontend): a namespace, a Latchkey
 * server, the test's application sites (started by `sites` once Latchkey's URL is known, their origins
 * the Environment's `connectUI.allowedOrigins`), oidc-provider, an API-key Provider and an OAuth 2 one
 * with an Integration each (`keyed`, `acme`), synced; and a headless chromium.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Browser } from 'playwright-core';
import { createTestNamespace, eventually } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { startOidcServer, type OidcTestServer } from '../../dev/peers/oidc-server.js';
import { launchBrowser } from './browser.js';
import { startReplica, type Replica } from './replica.js';

export interface EmbeddedConnectBed {
  ns: { name: string; delete(): Promise<void> };
  env: TestEnvironment;
  latchkey: Replica;
  oidc: OidcTestServer;
  browser: Browser;
  /** Everything but the test's sites (the test closes those first). */
  close(): Promise<void>;
}

export async function startEmbeddedConnectBed(
  kc: KubeConfig,
  opts: {
    prefix: string;
    /** The two Providers' names. */
    providers: { key: string; oauth: string };
    client: { clientId: string; clientSecret: string };
    /** The API-key Provider's field labels, if any. */
    fieldLabels?: Record<string, string>;
    /** The `acme` Integration's spec beside its provider. */
    acme: Record<string, unknown>;
    /** Starts the test's application sites; returns the origins the Environment allows. */
    sites(latchkeyUrl: string): Promise<string[]>;
  },
): Promise<EmbeddedConnectBed> {
  const P = opts.providers;
  const ns = await createTestNamespace(kc, opts.prefix);
  const latchkey = await startReplica(kc, { namespaces: [ns.name], selfBaseUrl: true });
  // The sites use the client served by this Latchkey, so they start after it (and before the Environment).
  const allowedOrigins = await opts.sites(latchkey.url);
  const env = await createEnvironment(kc, ns.name, { mode: 'development', connectUI: { allowedOrigins } });
  const oidc = await startOidcServer({ clients: [{ ...opts.client, redirectUris: [`${latchkey.url}/oauth/callback`] }] });
  await applyProvider(kc, P.key, {
    displayName: 'Keyed CRM',
    authMode: 'API_KEY',
    ...(opts.fieldLabels ? { fieldLabels: opts.fieldLabels } : {}),
  });
  await applyProvider(kc, P.oauth, {
    displayName: 'Acme Identity',
    authMode: 'OAUTH2',
    authorizationUrl: oidc.authorizationUrl,
    tokenUrl: oidc.tokenUrl,
    defaultScopes: ['openid'],
  });
  await createIntegration(kc, ns.name, 'keyed', { provider: P.key });
  await createIntegration(kc, ns.name, 'acme', { provider: P.oauth, ...opts.acme }, opts.client);
  const catalog = latchkey.ctx.catalog;
  await eventually(
    () =>
      catalog.getIntegration(ns.name, 'keyed') &&
      catalog.getIntegration(ns.name, 'acme') &&
      catalog.getProvider(P.key) &&
      catalog.getProvider(P.oauth) &&
      catalog.listEnvironments(ns.name)[0]?.spec.connectUI &&
      catalog.readSecretValue(ns.name, 'acme-client', 'clientId'),
  );
  const browser = await launchBrowser();
  return {
    ns,
    env,
    latchkey,
    oidc,
    browser,
    async close() {
      for (const stop of [() => browser.close(), () => latchkey.stop(), () => oidc.close()]) await stop();
      for (const p of Object.values(P)) await deleteProvider(kc, p);
      await ns.delete();
    },
  };
}
