/**
 * Webhook delivery when replicas crash: `latchkey server` runs as separate processes (the real entry
 * point), killed with SIGKILL while they hold a delivery claim. Counts come from the receiver.
 * - killed while the receiver hangs: another replica delivers after the claim expires, same webhook-id;
 * - killed after the receiver answered 200 but before the replica recorded it: delivered again, with
 *   the same webhook-id (at-least-once: receivers drop duplicates by webhook-id);
 * - two replicas share 200 deliveries: both deliver some (per replica, from their log lines), the
 *   receiver sees each webhook-id exactly once.
 */
import { randomUUID } from 'node:crypto';
import { WebhookOutbox, type PendingDelivery } from '../../src/k8s/webhook-outbox.js';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { createEnvironment, type TestEnvironment } from '../../dev/fixtures.js';
import { kubeconfigFile, startLatchkeyProcess, stopAll, type LatchkeyProcess } from '../support/faults/latchkey-process.js';
import { writeScenario } from '../support/faults/reliability-report.js';
import { signatureValid, webhookIdOf, webhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver.js';

const kc = testKubeConfig();
const outbox = new WebhookOutbox(kc);
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let receiver: WebhookReceiver;
let processes: LatchkeyProcess[] = [];

async function server(identity: string): Promise<LatchkeyProcess> {
  const p = await startLatchkeyProcess({
    command: 'server',
    identity,
    namespaces: [ns.name],
    kubeconfigPath: kubeconfigFile(kc),
    env: {
      LATCHKEY_WEBHOOK_NAMESPACE_CONCURRENCY: '8',
      LATCHKEY_WEBHOOK_BACKOFF_BASE_SECONDS: '0.2',
      LATCHKEY_WEBHOOK_BACKOFF_MAX_SECONDS: '1',
    },
  });
  processes.push(p);
  await p.ready();
  return p;
}

async function enqueue(tag: string): Promise<string> {
  const id = `msg_${randomUUID().replace(/-/g, '')}`;
  const body = JSON.stringify({ from: 'latchkey', type: 'auth', operation: 'creation', success: true, connectionId: tag });
  await outbox.enqueue(ns.name, { id, environment: env.name, body }, Date.now());
  return id;
}

const pending = async (id: string): Promise<PendingDelivery | undefined> => (await outbox.list([ns.name])).find((d) => d.id === id);
const receivedWith = (id: string) => receiver.received.filter((w) => webhookIdOf(w) === id);

beforeEach(async () => {
  ns = await createTestNamespace(kc, 'faults-webhooks');
  receiver = await webhookReceiver();
  await receiver.listen();
  env = await createEnvironment(kc, ns.name, { webhooks: { url: receiver.url } });
  processes = [];
});

afterEach(async () => {
  await stopAll(processes);
  await receiver.close();
  await ns.delete();
});

it('a replica killed while it holds a claim (receiver hanging): another delivers after the claim expires, same webhook-id', async () => {
  const a = await server('webhooks-a');
  receiver.hanging = true;
  const id = await enqueue('hung');
  await eventually(() => receivedWith(id).length === 1, 60_000);
  const claimed = await eventually(async () => {
    const d = await pending(id);
    return d?.claimedBy ? d : undefined;
  });
  expect(claimed.claimedBy).toBe('webhooks-a');
  // The second replica is up before the kill: it sees the claim and leaves the delivery alone until it expires.
  const b = await server('webhooks-b');
  receiver.hanging = false;
  const killedAt = Date.now();
  await a.kill();
  // The answered delivery (status 200), not A's hung one: the receiver keeps that too, with status 0,
  // and delivered() counts it, which left only the 30 s wait below for B (claims last 30 s: a race).
  const delivered = await eventually(() => receiver.received.find((w) => webhookIdOf(w) === id && w.status === 200), 120_000, 200);
  const deliveredAt = Date.now();
  expect(signatureValid(env.webhookSigningKey, delivered)).toBe(true);
  // Not before the claim's expiry (the clocks are this machine's): B waited for the dead replica's claim.
  const deliveredLine = await eventually(() => b.logged('webhook delivered').find((l) => l.webhookId === id), 30_000);
  expect(Date.parse(deliveredLine.time)).toBeGreaterThanOrEqual(claimed.claimedUntil);
  await eventually(async () => (await pending(id)) === undefined, 30_000);
  // Sent twice: once to the hanging receiver by A, once answered 200 by B; one webhook-id.
  expect(receivedWith(id).map((w) => w.status)).toEqual([0, 200]);
  writeScenario({
    scenario: 'webhook-kill-while-claimed',
    title: 'Webhooks: replica SIGKILLed holding a claim, receiver hanging',
    faults: { sigkill: 1, hangingReceiver: 1 },
    survived: true,
    counts: { requestsAtReceiver: receivedWith(id).length, deliveredAtReceiver: 1 },
    webhooksLost: 0,
    duplicates: [{ webhookId: id, times: receivedWith(id).length }],
    takeoverMs: deliveredAt - killedAt,
    notes: [
      `claim held until ${new Date(claimed.claimedUntil).toISOString()}; the other replica delivered at ${deliveredLine.time}`,
      'the first request never got an answer (the receiver hung), so it is not a delivery the receiver acted on',
    ],
  });
}, 240_000);

it('receiver answered 200, the replica died before recording it: delivered again with the same webhook-id (at-least-once)', async () => {
  const a = await server('webhooks-a');
  const id = await enqueue('answered');
  // The receiver kills the sender the moment the request arrives, then answers 200: the sender
  // never gets to delete the delivery from the outbox.
  receiver.onRequest = (w) => {
    if (webhookIdOf(w) === id && a.alive()) process.kill(a.pid, 'SIGKILL');
  };
  await eventually(() => receivedWith(id).length === 1, 60_000);
  await a.exited;
  const claimed = await pending(id);
  expect(claimed?.claimedBy).toBe('webhooks-a');
  const b = await server('webhooks-b');
  await eventually(() => receivedWith(id).length === 2, 120_000, 200);
  await eventually(async () => (await pending(id)) === undefined, 30_000);
  const copies = receivedWith(id);
  // Both answered 200: a duplicate, and the receiver can tell it is one by its webhook-id.
  expect(copies.map((w) => [w.status, webhookIdOf(w), w.body])).toEqual([
    [200, id, copies[0]!.body],
    [200, id, copies[0]!.body],
  ]);
  expect(b.logged('webhook delivered').filter((l) => l.webhookId === id)).toHaveLength(1);
  writeScenario({
    scenario: 'webhook-kill-after-200',
    title: 'Webhooks: receiver answered 200, replica SIGKILLed before recording it',
    faults: { sigkill: 1 },
    survived: true,
    counts: { requestsAtReceiver: copies.length, answered200: copies.length },
    webhooksLost: 0,
    duplicates: [{ webhookId: id, times: copies.length }],
    notes: ['at-least-once: the duplicate carries the same webhook-id, as Standard Webhooks receivers expect'],
  });
}, 240_000);

it('two replicas share 200 deliveries: both deliver some, none twice', async () => {
  const a = await server('webhooks-a');
  const b = await server('webhooks-b');
  const ids = new Set<string>();
  for (let i = 0; i < 200; i += 20) {
    const batch = await Promise.all(Array.from({ length: 20 }, (_, j) => enqueue(`shared-${i + j}`)));
    batch.forEach((id) => ids.add(id));
  }
  await eventually(() => new Set(receiver.delivered().map(webhookIdOf)).size >= 200, 180_000, 250);
  await eventually(async () => (await outbox.list([ns.name])).length === 0, 60_000);
  const perId = new Map<string, number>();
  for (const w of receiver.received) perId.set(webhookIdOf(w), (perId.get(webhookIdOf(w)) ?? 0) + 1);
  const duplicates = [...perId].filter(([, n]) => n > 1).map(([webhookId, times]) => ({ webhookId, times }));
  expect(duplicates).toEqual([]);
  expect([...perId.keys()].sort()).toEqual([...ids].sort());
  const byA = a.logged('webhook delivered').length;
  const byB = b.logged('webhook delivered').length;
  expect(byA).toBeGreaterThan(0);
  expect(byB).toBeGreaterThan(0);
  expect(byA + byB).toBe(200);
  writeScenario({
    scenario: 'webhook-two-replicas',
    title: 'Webhooks: two replicas share 200 deliveries',
    faults: {},
    survived: true,
    counts: { enqueued: ids.size, deliveredAtReceiver: receiver.delivered().length, byReplicaA: byA, byReplicaB: byB },
    webhooksLost: ids.size - new Set(receiver.delivered().map(webhookIdOf)).size,
    duplicates,
  });
}, 300_000);
