/**
 * What a Connect UI test file runs against: a Latchkey server replica on 127.0.0.1 (publicBaseUrl set
 * to it) with a webhook dispatcher, a loopback webhook receiver, a tiny "application" page that uses
 * the frontend client, and a headless Debian chromium.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Browser } from 'playwright-core';
import type { Logger } from '../../src/app/log.js';
import type { KubeStore } from '../../src/k8s/store.js';
import { createTestNamespace, eventually } from '../../dev/cluster.js';
import { createEnvironment, type TestEnvironment } from '../../dev/fixtures.js';
import { launchBrowser } from './browser.js';
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
  synced(ready?: (store: KubeStore) => unknown): Promise<void>;
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
  opts: { /** The replica's logger (the secrets scan passes captureLogs().logger). */ logger?: Logger } = {},
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
  });
  const app = await appPage(latchkey.url);
  const browser = await launchBrowser();
  return {
    ns,
    env,
    latchkey,
    receiver,
    app,
    browser,
    async synced(ready = () => true) {
      const store = latchkey.ctx.store;
      await eventually(() => store.listEnvironments(ns.name).length > 0 && ready(store));
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
