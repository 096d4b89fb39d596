/**
 * What the Connect UI tests share: a Latchkey HTTP server on 127.0.0.1 (port 0, publicBaseUrl set
 * to it) with a webhook dispatcher, a loopback webhook receiver, a tiny "application" page that
 * uses the frontend client, a headless Debian chromium, and sealed session tokens.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startHttpServer, type RunningServer } from '../../src/http/server.js';
import { sealSessionToken, type SessionClaims } from '../../src/auth/session-tokens.js';
import { loadConfig, type Config } from '../../src/app/config.js';
import { createContext, type AppContext } from '../../src/app/context.js';
import { KubeStore } from '../../src/k8s/store.js';
import { WebhookOutbox } from '../../src/k8s/webhook-outbox.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { verifyWebhook } from '../../src/webhooks/signing.js';
import { createTestNamespace, eventually, testLogger } from '../../dev/cluster.js';
import { LOOPBACK_PEERS } from '../../dev/egress.js';
import { createEnvironment, type TestEnvironment } from '../../dev/fixtures.js';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function testConfig(namespace: string, overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({ LATCHKEY_LOG_LEVEL: 'silent', LATCHKEY_EGRESS_ALLOW: LOOPBACK_PEERS }),
    watchNamespaces: [namespace],
    webhookMaxAttempts: 8,
    webhookBackoffBaseSeconds: 0.2,
    webhookBackoffMaxSeconds: 1,
    identity: `test-${randomBytes(3).toString('hex')}`,
    ...overrides,
  };
}

export interface Latchkey {
  ctx: AppContext;
  server: RunningServer;
  url: string;
  stop(): Promise<void>;
}

/** A Latchkey server (and, unless disabled, a webhook dispatcher) for one namespace. */
export async function startLatchkey(
  kc: KubeConfig,
  namespace: string,
  opts: { dispatcher?: boolean; config?: Partial<Config> } = {},
): Promise<Latchkey> {
  const config = testConfig(namespace, opts.config);
  const logger = testLogger();
  const store = new KubeStore(kc, { namespaces: [namespace], logger });
  await store.start();
  const ctx = createContext({ config, logger, kc, store });
  const server = await startHttpServer(ctx, 0, '127.0.0.1');
  config.publicBaseUrl = server.url;
  const dispatcher = opts.dispatcher === false ? undefined : startDispatcher(ctx);
  return {
    ctx,
    server,
    url: server.url,
    async stop() {
      await dispatcher?.stop();
      await server.close();
      await store.stop();
    },
  };
}

export function startDispatcher(ctx: AppContext, pollIntervalMs = 150): WebhookDispatcher {
  const d = new WebhookDispatcher({
    outbox: new WebhookOutbox(ctx.kc),
    store: ctx.store,
    fetch: ctx.fetch,
    clock: ctx.clock,
    logger: ctx.logger,
    metrics: ctx.metrics,
    config: ctx.config,
    identity: ctx.config.identity,
    pollIntervalMs,
    requestTimeoutMs: 3000,
  });
  d.start();
  return d;
}

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  json: Record<string, unknown>;
  status: number;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  /** Every request, including the ones answered with an error status. */
  received: ReceivedWebhook[];
  /** Requests answered 2xx. */
  delivered(): ReceivedWebhook[];
  /** Status answers to give, in order, before answering 200 (with optional headers). */
  answers: Array<{ status: number; headers?: Record<string, string> }>;
  listen(): Promise<void>;
  close(): Promise<void>;
}

/** A loopback webhook receiver; `port` may be given to come back up on the same address. */
export async function webhookReceiver(port = 0): Promise<WebhookReceiver> {
  let server: Server | undefined;
  const r: WebhookReceiver = {
    url: '',
    port,
    received: [],
    answers: [],
    delivered: () => r.received.filter((w) => w.status < 300),
    async listen() {
      server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const answer = r.answers.shift() ?? { status: 200 };
          let json: Record<string, unknown> = {};
          try {
            json = JSON.parse(body) as Record<string, unknown>;
          } catch {
            /* recorded as is */
          }
          r.received.push({ headers: req.headers, body, json, status: answer.status });
          res.writeHead(answer.status, answer.headers ?? {}).end();
        });
      });
      await new Promise<void>((resolve) => server!.listen(r.port, '127.0.0.1', resolve));
      r.port = (server.address() as { port: number }).port;
      r.url = `http://127.0.0.1:${r.port}/hooks`;
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (!server) return resolve();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return r;
}

export function signatureValid(key: string, w: ReceivedWebhook): boolean {
  const h = Object.fromEntries(Object.entries(w.headers).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
  return verifyWebhook(key, h, w.body, Math.floor(Date.now() / 1000));
}

export function sealSession(secretKey: string, claims: Omit<SessionClaims, 'sid' | 'exp'> & { exp?: number }): string {
  return sealSessionToken({ sid: randomBytes(8).toString('hex'), exp: Math.floor(Date.now() / 1000) + 600, ...claims }, secretKey);
}

/**
 * The application's page (its own origin): loads the frontend client from Latchkey and opens the
 * Connect UI from a button; every event lands in `window.latchkeyEvents`.
 */
export async function appPage(latchkeyUrl: string): Promise<{ url: string; close(): Promise<void> }> {
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>App</title></head><body>
<button id="open">Connect</button>
<script type="module">
import { openConnectUI } from '${latchkeyUrl}/connect/client.js';
window.latchkeyEvents = [];
document.getElementById('open').addEventListener('click', () => {
  openConnectUI({ baseUrl: '${latchkeyUrl}', sessionToken: window.sessionToken, onEvent: (e) => window.latchkeyEvents.push(e) });
});
window.clientReady = true;
</script></body></html>`;
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
}

/** Opens the application page, sets the session token and clicks "Connect"; returns the popup. */
export async function openConnectPopup(context: BrowserContext, appUrl: string, sessionToken: string): Promise<{ app: Page; popup: Page }> {
  const app = await context.newPage();
  await app.goto(appUrl);
  await app.waitForFunction(() => (window as unknown as { clientReady?: boolean }).clientReady === true);
  await app.evaluate((t) => {
    (window as unknown as { sessionToken: string }).sessionToken = t;
  }, sessionToken);
  const [popup] = await Promise.all([context.waitForEvent('page'), app.click('#open')]);
  return { app, popup };
}

export type ClientEvent = { type: string; providerConfigKey?: string; connectionId?: string; error?: { code: string; message: string } };

export async function eventsOf(app: Page): Promise<ClientEvent[]> {
  return app.evaluate(() => (window as unknown as { latchkeyEvents: ClientEvent[] }).latchkeyEvents);
}

export async function waitForEvent(app: Page, type: string, timeoutMs = 20_000): Promise<ClientEvent> {
  await app.waitForFunction(
    (t) => (window as unknown as { latchkeyEvents: Array<{ type: string }> }).latchkeyEvents.some((e) => e.type === t),
    type,
    { timeout: timeoutMs },
  );
  return (await eventsOf(app)).find((e) => e.type === type)!;
}

/** What a Connect UI test file runs against: its namespace, Environment, Latchkey, receiver, app page and browser. */
export interface ConnectBed {
  ns: { name: string; delete(): Promise<void> };
  env: TestEnvironment;
  latchkey: Latchkey;
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
export async function startConnectBed(kc: KubeConfig, prefix: string, mode: 'development' | 'production'): Promise<ConnectBed> {
  const ns = await createTestNamespace(kc, prefix);
  const receiver = await webhookReceiver();
  await receiver.listen();
  const env = await createEnvironment(kc, ns.name, { mode, webhooks: { url: receiver.url } });
  const latchkey = await startLatchkey(kc, ns.name);
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
