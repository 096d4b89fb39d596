/**
 * What a Connect UI test file runs against: a Latchkey server replica on 127.0.0.1 (publicBaseUrl set
 * to it) with a webhook dispatcher, a loopback webhook receiver, a tiny "application" page that uses
 * the frontend client, and a headless Debian chromium.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Browser, Page } from 'playwright-core';
import type { Logger } from '../../src/platform/log.js';
import type { StoreParts } from '../../src/k8s/store.js';
import type { EgressGuard } from '../../src/egress/guard.js';
import { createTestNamespace, eventually } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { startOidcServer, type OidcTestServer, type TestClient } from '../../dev/peers/oidc-server.js';
import { launchBrowser, loginAndConsent } from './browser.js';
import { startReplica, type Replica } from './replica.js';
import { appPage } from './servers/app-page.js';
import { webhookReceiver, type WebhookReceiver } from './servers/webhook-receiver.js';

/** What a Connect UI test file runs against: its namespace, Environment, Latchkey, receiver, app page and browser. */
export interface ConnectBed {
  ns: { name: string; delete(): Promise<void> };
  env: TestEnvironment;
  latchkey: Replica;
  receiver: WebhookReceiver;
  app: { url: string; close(): Promise<void> };
  browser: Browser;
  /** Waits until this Latchkey's caches hold the Environment and whatever else `ready` checks. */
  synced(ready?: (store: StoreParts) => unknown): Promise<void>;
  close(): Promise<void>;
}

/**
 * A namespace with an Environment whose webhooks go to a loopback receiver, a Latchkey server with a
 * webhook dispatcher, the application page and a headless chromium. Test files add their providers
 * and integrations, then call `synced`.
 */
export async function startConnectBed(
  kc: KubeConfig,
  prefix: string,
  mode: 'development' | 'production',
  opts: {
    /** The replica's logger (the secrets scan passes captureLogs().logger). */
    logger?: Logger;
    /** The replica's egress guard (simulated providers: their hosts resolved to the simulator). */
    egress?: EgressGuard;
    /** More Chromium flags (see launchBrowser). */
    browserArgs?: string[];
  } = {},
): Promise<ConnectBed> {
  const ns = await createTestNamespace(kc, prefix);
  const receiver = await webhookReceiver();
  await receiver.listen();
  const env = await createEnvironment(kc, ns.name, { mode, webhooks: { url: receiver.url } });
  const latchkey = await startReplica(kc, {
    namespaces: [ns.name],
    components: ['server', 'webhooks'],
    selfBaseUrl: true,
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(opts.egress ? { egress: opts.egress } : {}),
  });
  const app = await appPage(latchkey.url);
  const browser = await launchBrowser(opts.browserArgs);
  return {
    ns,
    env,
    latchkey,
    receiver,
    app,
    browser,
    async synced(ready = () => true) {
      const store = latchkey.ctx;
      await eventually(() => store.catalog.listEnvironments(ns.name).length > 0 && ready(store));
    },
    async close() {
      await browser.close();
      await app.close();
      await latchkey.stop();
      await receiver.close();
      await ns.delete();
    },
  };
}

/** A Connect bed with a real OAuth 2 server in front of the end user. */
export interface OAuth2ConnectBed extends ConnectBed {
  /** oidc-provider; its client's redirect URI is this Latchkey's callback. */
  oidc: OidcTestServer;
  /** The OAUTH2 Provider at it (asks for `openid` by default). */
  provider: string;
  /** In the popup at oidc-provider: signs in as `login` (any password) and stops at the consent page. */
  loginAndConsent(popup: Page, login?: string): Promise<void>;
}

/**
 * {@link startConnectBed} plus oidc-provider and an OAUTH2 Provider named `provider` pointing at it; the
 * test file adds its Integrations (with `client`), then calls `synced`. `close` also stops the server and
 * deletes the Provider.
 */
export async function startOAuth2ConnectBed(
  kc: KubeConfig,
  opts: { prefix: string; provider: string; client: TestClient; accessTokenTtl?: number; displayName?: string },
): Promise<OAuth2ConnectBed> {
  const bed = await startConnectBed(kc, opts.prefix, 'development');
  const oidc = await startOidcServer({
    clients: [{ ...opts.client, redirectUris: [`${bed.latchkey.url}/oauth/callback`] }],
    ...(opts.accessTokenTtl ? { accessTokenTtl: opts.accessTokenTtl } : {}),
  });
  await applyProvider(kc, opts.provider, {
    displayName: opts.displayName ?? 'Acme Identity',
    authMode: 'OAUTH2',
    authorizationUrl: oidc.authorizationUrl,
    tokenUrl: oidc.tokenUrl,
    defaultScopes: ['openid'],
  });
  return {
    ...bed,
    oidc,
    provider: opts.provider,
    loginAndConsent: (popup, login = 'alice') => loginAndConsent(popup, oidc.issuer, login),
    async close() {
      await oidc.close();
      await deleteProvider(kc, opts.provider);
      await bed.close();
    },
  };
}
