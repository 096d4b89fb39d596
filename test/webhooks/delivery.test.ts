/**
 * Auth webhook delivery: Standard Webhooks signatures, at-least-once delivery from the cluster
 * outbox with retries (receiver down then up, 5xx, 429 + Retry-After), a dispatcher restart mid-way, and two replicas sharing the outbox without double sends.
 */
import { randomUUID } from 'node:crypto';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { AppContext } from '../../src/context/app-context.js';
import type { ConnectionResource } from '../../src/k8s/resources.js';
import { WEBHOOK_DELIVERY_LABEL, WebhookOutbox } from '../../src/k8s/webhook-outbox.js';
import { enqueueAuthWebhook, enqueueRefreshFailedWebhook } from '../../src/webhooks/auth-webhooks.js';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { createEnvironment, type TestEnvironment } from '../../dev/fixtures.js';
import { startReplica, type Replica } from '../support/replica.js';
import { signatureValid, webhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let receiver: WebhookReceiver;
const running: Replica[] = [];

/** A replica with its own store and, unless told otherwise, a webhook dispatcher polling every 100 ms. */
async function replica(withDispatcher = true): Promise<Replica> {
  const r = await startReplica(kc, { namespaces: [ns.name], components: withDispatcher ? ['webhooks'] : [], webhookPollMs: 100 });
  running.push(r);
  const store = r.ctx;
  await eventually(
    () => store.catalog.listEnvironments(ns.name).length && store.catalog.readSecretValue(ns.name, `${env.name}-keys`, 'webhookSigningKey'),
  );
  return r;
}

async function stopReplica(r: Replica): Promise<void> {
  await r.stop();
  running.splice(running.indexOf(r), 1);
}

const pendingFor = async (connectionId: string) =>
  (await new WebhookOutbox(kc).list([ns.name])).filter(
    (d) => (JSON.parse(d.body) as { connectionId: string }).connectionId === connectionId,
  );

async function enqueue(ctx: AppContext, connectionId: string) {
  return (await enqueueAuthWebhook(ctx, enqueueInput(connectionId))).result;
}

function enqueueInput(connectionId: string) {
  return {
    namespace: ns.name,
    operation: 'creation',
    success: true,
    connectionId,
    providerConfigKey: 'github',
    provider: 'github',
    endUser: { id: 'u1', tags: { org: 'o' } },
  } as const;
}

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'webhooks');
  receiver = await webhookReceiver();
  await receiver.listen();
  env = await createEnvironment(kc, ns.name, { webhooks: { url: receiver.url } });
});

// Each case starts with the receiver up, answering 200 and not hanging, and leaves no replica running.
beforeEach(async () => {
  receiver.answers.length = 0;
  receiver.hanging = false;
  receiver.onRequest = undefined;
  await receiver.listen();
});

afterEach(async () => {
  for (const r of [...running]) await stopReplica(r);
});

afterAll(async () => {
  await receiver.close();
  await ns.delete();
});

describe('delivery', () => {
  it('retries an enqueue that the API server refused, in the background, and delivers it once', async () => {
    const r = await replica();
    const connectionId = `enqueue-fault-${randomUUID()}`;
    // The outbox the webhook module is given refuses the first two writes (as an unreachable API server would).
    const real = new WebhookOutbox(kc);
    let refused = 0;
    const outbox = {
      enqueue: (...args: Parameters<WebhookOutbox['enqueue']>) =>
        refused++ < 2 ? Promise.reject(new Error('injected: connect ECONNREFUSED')) : real.enqueue(...args),
    };
    const outcome = await enqueueAuthWebhook(
      { ...r.ctx, outbox, enqueueRetry: { attempts: 4, baseMs: 50, maxMs: 200 } },
      enqueueInput(connectionId),
    );
    expect(outcome.result).toBe('retrying');
    expect(await outcome.settled).toBe('queued');
    expect(refused).toBe(3);
    const hook = await eventually(() => receiver.delivered().find((w) => w.json.connectionId === connectionId));
    expect(hook.json).toMatchObject({ operation: 'creation', connectionId });
    await eventually(async () => (await pendingFor(connectionId)).length === 0);
    expect(receiver.received.filter((w) => w.json.connectionId === connectionId)).toHaveLength(1);
  });

  it('gives an enqueue up after its bounded retries', async () => {
    const r = await replica(false);
    const outbox = { enqueue: () => Promise.reject(new Error('injected: connect ECONNREFUSED')) };
    const outcome = await enqueueAuthWebhook(
      { ...r.ctx, outbox, enqueueRetry: { attempts: 2, baseMs: 10, maxMs: 20 } },
      enqueueInput(`enqueue-lost-${randomUUID()}`),
    );
    expect(outcome.result).toBe('retrying');
    expect(await outcome.settled).toBe('failed');
  });

  it('keeps retrying while the receiver is down and delivers once per webhook-id when it is back', async () => {
    await receiver.close();
    const r = await replica();
    const connectionId = `down-${randomUUID()}`;
    expect(await enqueue(r.ctx, connectionId)).toBe('queued');
    const [pending] = await eventually(async () => {
      const p = await pendingFor(connectionId);
      return p.length && p[0]!.attempts >= 2 ? p : undefined;
    });
    await receiver.listen(); // same port
    const hook = await eventually(() => receiver.delivered().find((w) => w.json.connectionId === connectionId));
    expect(hook.headers['webhook-id']).toBe(pending!.id);
    expect(signatureValid(env.webhookSigningKey, hook)).toBe(true);
    await eventually(async () => (await pendingFor(connectionId)).length === 0);
    // The dispatcher keeps polling: a later webhook is delivered, and the first was still sent only once.
    const later = `down-later-${randomUUID()}`;
    expect(await enqueue(r.ctx, later)).toBe('queued');
    await eventually(() => receiver.delivered().some((w) => w.json.connectionId === later));
    expect(receiver.received.filter((w) => w.json.connectionId === connectionId)).toHaveLength(1);
    await stopReplica(r);
  });

  it('retries 5xx and 429 (with Retry-After) with the same webhook-id', async () => {
    const r = await replica();
    receiver.answers.push({ status: 503 }, { status: 429, headers: { 'retry-after': '1' } });
    const retried = `retry-${randomUUID()}`;
    await enqueue(r.ctx, retried);
    await eventually(() => receiver.delivered().find((w) => w.json.connectionId === retried));
    const attempts = receiver.received.filter((w) => w.json.connectionId === retried);
    expect(attempts.map((w) => w.status)).toEqual([503, 429, 200]);
    expect(new Set(attempts.map((w) => w.headers['webhook-id'])).size).toBe(1);
    expect(attempts.every((w) => signatureValid(env.webhookSigningKey, w))).toBe(true);

    await stopReplica(r);
  });

  it('delivers a pending webhook after the dispatcher restarts with a new store', async () => {
    receiver.answers.push(...Array.from({ length: 100 }, () => ({ status: 503 })));
    const first = await replica();
    const connectionId = `restart-${randomUUID()}`;
    await enqueue(first.ctx, connectionId);
    await eventually(async () => (await pendingFor(connectionId))[0]?.attempts);
    await stopReplica(first); // the pod goes away with the delivery still pending
    receiver.answers.length = 0; // the receiver recovers
    const delivered = receiver.delivered().filter((w) => w.json.connectionId === connectionId).length;
    expect(delivered).toBe(0);
    expect(await pendingFor(connectionId)).toHaveLength(1);

    await replica(); // a new pod
    const hook = await eventually(() => receiver.delivered().find((w) => w.json.connectionId === connectionId));
    expect(signatureValid(env.webhookSigningKey, hook)).toBe(true);
    await eventually(async () => (await pendingFor(connectionId)).length === 0);
    expect(receiver.delivered().filter((w) => w.json.connectionId === connectionId)).toHaveLength(1);
    for (const r of [...running]) await stopReplica(r);
  });

  it('two replicas share the outbox without sending any delivery twice', async () => {
    const producer = await replica(false);
    const ids = Array.from({ length: 12 }, () => `pair-${randomUUID()}`);
    await Promise.all(ids.map((id) => enqueue(producer.ctx, id)));
    await Promise.all([replica(), replica()]);
    await eventually(() => ids.every((id) => receiver.delivered().some((w) => w.json.connectionId === id)), 30_000);
    await eventually(async () => {
      const left = await core.listNamespacedConfigMap({ namespace: ns.name, labelSelector: WEBHOOK_DELIVERY_LABEL });
      return left.items.length === 0;
    });
    for (const id of ids) expect(receiver.received.filter((w) => w.json.connectionId === id)).toHaveLength(1);
    for (const r of [...running]) await stopReplica(r);
  });

  it('sends the refresh-failure webhook the controller queues, and nothing when a switch is off', async () => {
    const r = await replica();
    const connection = {
      metadata: { name: 'c1', namespace: ns.name },
      spec: {
        integration: 'github',
        provider: 'github',
        connectionId: `refresh-${randomUUID()}`,
        id: 1,
        authMode: 'OAUTH2',
        endUser: { id: 'u9', tags: { org: 'x' } },
      },
    } as ConnectionResource;
    expect((await enqueueRefreshFailedWebhook(r.ctx, connection, { message: 'invalid_grant: the refresh token was revoked' })).result).toBe(
      'queued',
    );
    const hook = await eventually(() => receiver.delivered().find((w) => w.json.connectionId === connection.spec.connectionId));
    expect(hook.json).toEqual({
      from: 'latchkey',
      type: 'auth',
      authMode: 'OAUTH2',
      operation: 'refresh',
      success: false,
      connectionId: connection.spec.connectionId,
      endUser: { endUserId: 'u9', tags: { org: 'x' } },
      providerConfigKey: 'github',
      provider: 'github',
      environment: env.name,
      error: { type: 'refresh_failed', message: 'invalid_grant: the refresh token was revoked' },
    });

    // Switch creation webhooks off: nothing is queued.
    const custom = kc.makeApiClient(CustomObjectsApi);
    await custom.patchNamespacedCustomObject({
      group: 'latchkey.dev',
      version: 'v1alpha1',
      namespace: ns.name,
      plural: 'environments',
      name: env.name,
      body: [{ op: 'replace', path: '/spec/webhooks/sendOnCreation', value: false }],
    });
    await eventually(() => r.ctx.catalog.listEnvironments(ns.name)[0]?.spec.webhooks?.sendOnCreation === false);
    const off = `off-${randomUUID()}`;
    expect(await enqueue(r.ctx, off)).toBe('disabled');
    expect(await pendingFor(off)).toHaveLength(0);
    await stopReplica(r);
  });
});
