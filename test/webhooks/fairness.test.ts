/**
 * Webhook delivery policy against real receivers on loopback and the real outbox: a tenant's
 * hanging receiver does not hold up another tenant's deliveries; a 4xx is retried (only 410 Gone
 * stops); a delivery is given up when its retry window has passed.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AppContext } from '../../src/context/app-context.js';
import { WebhookOutbox } from '../../src/k8s/webhook-outbox.js';
import { enqueueAuthWebhook } from '../../src/webhooks/auth-webhooks.js';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { createEnvironment } from '../../dev/fixtures.js';
import { startReplica } from '../support/replica.js';
import { webhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver.js';

const kc = testKubeConfig();
type Namespace = Awaited<ReturnType<typeof createTestNamespace>>;
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function namespaceWithReceiver(prefix: string, url: string): Promise<Namespace> {
  const ns = await createTestNamespace(kc, prefix);
  cleanups.push(() => ns.delete());
  await createEnvironment(kc, ns.name, { webhooks: { url } });
  return ns;
}

async function dispatcherFor(namespaces: string[], config: Partial<AppContext['config']> = {}): Promise<{ ctx: AppContext }> {
  const replica = await startReplica(kc, { namespaces, components: ['webhooks'], config, webhookPollMs: 100 });
  cleanups.push(() => replica.stop());
  await eventually(() => namespaces.every((ns) => replica.ctx.catalog.readSecretValue(ns, 'test-keys', 'webhookSigningKey')));
  return { ctx: replica.ctx };
}

const enqueue = (ctx: AppContext, namespace: string, connectionId: string) =>
  enqueueAuthWebhook(ctx, {
    namespace,
    operation: 'creation',
    success: true,
    connectionId,
    providerConfigKey: 'github',
    provider: 'github',
    endUser: { id: 'u1' },
  });

/** A receiver that holds every request open until released. */
async function hangingReceiver(): Promise<{ url: string; held: number; release(): void; close(): Promise<void> }> {
  const waiting: ServerResponse[] = [];
  let released = false;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    if (released) res.writeHead(200).end();
    else waiting.push(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    get held() {
      return waiting.length;
    },
    release() {
      released = true;
      for (const res of waiting.splice(0)) res.writeHead(200).end();
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

it("one tenant's hanging receiver does not hold up another tenant's deliveries", async () => {
  const slow = await hangingReceiver();
  cleanups.push(() => slow.close());
  const fast: WebhookReceiver = await webhookReceiver();
  await fast.listen();
  cleanups.push(() => fast.close());
  const [a, b] = [await namespaceWithReceiver('wh-slow', slow.url), await namespaceWithReceiver('wh-fast', fast.url)];
  const { ctx } = await dispatcherFor([a.name, b.name], { webhookConcurrency: 4, webhookNamespaceConcurrency: 2 });

  for (let i = 0; i < 6; i++) await enqueue(ctx, a.name, `slow-${i}`);
  // The slow tenant gets its share of the pool (2) and no more.
  await eventually(() => slow.held === 2);
  const id = `fast-${randomUUID()}`;
  await enqueue(ctx, b.name, id);
  await eventually(() => fast.delivered().some((w) => w.json.connectionId === id));
  expect(slow.held).toBe(2); // still hanging: B was not waiting for A's batch
  slow.release();
  // Everything of A is delivered in the end.
  await eventually(async () => (await new WebhookOutbox(kc).list([a.name])).length === 0, 30_000);
});

it('retries a 4xx with the same webhook-id, and stops at once on 410 Gone', async () => {
  const receiver = await webhookReceiver();
  await receiver.listen();
  cleanups.push(() => receiver.close());
  const ns = await namespaceWithReceiver('wh-4xx', receiver.url);
  const { ctx } = await dispatcherFor([ns.name]);

  receiver.answers.push({ status: 404 }, { status: 401 });
  const retried = `retried-${randomUUID()}`;
  await enqueue(ctx, ns.name, retried);
  await eventually(() => receiver.delivered().find((w) => w.json.connectionId === retried));
  const attempts = receiver.received.filter((w) => w.json.connectionId === retried);
  expect(attempts.map((w) => w.status)).toEqual([404, 401, 200]);
  expect(new Set(attempts.map((w) => w.headers['webhook-id'])).size).toBe(1);

  receiver.answers.push({ status: 410 });
  const gone = `gone-${randomUUID()}`;
  await enqueue(ctx, ns.name, gone);
  await eventually(async () => (await new WebhookOutbox(kc).list([ns.name])).length === 0);
  expect(receiver.received.filter((w) => w.json.connectionId === gone).map((w) => w.status)).toEqual([410]);
});

it('gives a delivery up once its retry window has passed, not after a number of attempts', async () => {
  const receiver = await webhookReceiver();
  await receiver.listen();
  cleanups.push(() => receiver.close());
  receiver.answers.push(...Array.from({ length: 1000 }, () => ({ status: 503 })));
  const ns = await namespaceWithReceiver('wh-window', receiver.url);
  const { ctx } = await dispatcherFor([ns.name], { webhookMaxAttempts: 0, webhookRetryWindowSeconds: 3 });
  const id = `window-${randomUUID()}`;
  await enqueue(ctx, ns.name, id);
  await eventually(async () => (await new WebhookOutbox(kc).list([ns.name])).length === 0, 30_000);
  const attempts = receiver.received.filter((w) => w.json.connectionId === id);
  expect(attempts.length).toBeGreaterThanOrEqual(2);
  expect(attempts.every((w) => w.status === 503)).toBe(true);
});
