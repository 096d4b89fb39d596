/**
 * The control plane restarted under load (#17). This suite starts its OWN control plane (the run's
 * shared one serves other suites at the same time), runs `latchkey server` and `latchkey controller`
 * as separate processes against it, and drives imports, a forced refresh at a real oidc-provider and
 * webhook deliveries to the receiver while kube-apiserver (then etcd) is stopped and started again.
 * It asserts:
 * - every request is answered 2xx, or 503 with the error shape (`api_unavailable` and friends), within a
 *   bound: never a 500, never a hang; a refused request succeeds when retried after the restart;
 * - nothing is lost or doubled: each imported connection exists once with its Secret, the refresh
 *   happened at the provider as often as it was answered 200 (no spent refresh token replayed), each
 *   webhook is delivered with its webhook-id (a repeat only with the same id);
 * - `/readyz` of both processes is 503 while kube-apiserver is down and 200 once the caches follow it again.
 */
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { installCrds } from '../../dev/apply.js';
import { createTestNamespace, eventually } from '../../dev/cluster.js';
import { REPO_ROOT, startControlPlane, type ControlPlane } from '../../dev/control-plane.js';
import { applyProvider, createEnvironment, createIntegration, type TestEnvironment } from '../../dev/fixtures.js';
import { startOidcServer, type OidcTestServer, type TestClient } from '../../dev/peers/oidc-server.js';
import { WebhookOutbox } from '../../src/k8s/webhook-outbox.js';
import { GROUP, VERSION } from '../../src/k8s/resources.js';
import { dumpLogs, startLatchkeyProcess, stopAll, type LatchkeyProcess } from '../support/faults/latchkey-process.js';
import { writeScenario } from '../support/faults/reliability-report.js';
import { webhookIdOf, webhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver.js';

const client: TestClient = { clientId: 'latchkey-faults-restart', clientSecret: 'faults-restart-client-secret-0123456789' };
/** A request that has no answer after this long is a hang (the API client's own bound is 10 s per call). */
const REQUEST_BOUND_MS = 45_000;
const WEBHOOKS = 6;

let cp: ControlPlane;
let kc: KubeConfig;
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let oidc: OidcTestServer;
let receiver: WebhookReceiver;
let processes: LatchkeyProcess[] = [];

beforeAll(async () => {
  cp = await startControlPlane({ controllerManager: false });
  kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  await installCrds(kc, join(REPO_ROOT, 'crds'));
  ns = await createTestNamespace(kc, 'faults-restart');
  [oidc, receiver] = await Promise.all([startOidcServer({ clients: [client], accessTokenTtl: 3600 }), webhookReceiver()]);
  await receiver.listen();
  await Promise.all([
    applyProvider(kc, 'restart-oidc', {
      displayName: 'Restart OIDC',
      authMode: 'OAUTH2',
      authorizationUrl: oidc.authorizationUrl,
      tokenUrl: oidc.tokenUrl,
    }),
    applyProvider(kc, 'restart-key', { displayName: 'Restart key', authMode: 'API_KEY' }),
  ]);
  env = await createEnvironment(kc, ns.name, { webhooks: { url: receiver.url } });
  await createIntegration(
    kc,
    ns.name,
    'oauth',
    { provider: 'restart-oidc' },
    { clientId: client.clientId, clientSecret: client.clientSecret },
  );
  await createIntegration(kc, ns.name, 'keys', { provider: 'restart-key' });
}, 600_000);

afterAll(async () => {
  await stopAll(processes);
  await Promise.all([oidc?.close(), receiver?.close()]);
  await cp?.stop();
});

/** What a case may leave behind: the component it stopped (if it failed), its polling loops, its processes. */
let down: Component | undefined;
let background: Array<{ stop(): Promise<void> }> = [];

afterEach(async () => {
  await Promise.all(background.map((b) => b.stop()));
  background = [];
  receiver.onRequest = undefined;
  if (down) await down.start();
  down = undefined;
  dumpLogs(`control-plane-restart-${expect.getState().currentTestName?.slice(0, 40).replace(/\W+/g, '-')}`, processes);
  await stopAll(processes);
  processes = [];
});

async function startProcesses(): Promise<{ server: LatchkeyProcess; controller: LatchkeyProcess }> {
  const common = { namespaces: [ns.name], kubeconfigPath: cp.kubeconfigPath };
  const server = await startLatchkeyProcess({
    ...common,
    command: 'server',
    identity: 'restart-server',
    env: { LATCHKEY_WEBHOOK_BACKOFF_BASE_SECONDS: '0.2', LATCHKEY_WEBHOOK_BACKOFF_MAX_SECONDS: '1' },
  });
  const controller = await startLatchkeyProcess({ ...common, command: 'controller', identity: 'restart-controller' });
  processes = [server, controller];
  await Promise.all([server.ready(120_000), controller.ready(120_000)]);
  return { server, controller };
}

interface Outcome {
  what: string;
  status: number;
  code?: string;
  ms: number;
  /** The error body had the shape `{ error: { code, message } }`. */
  shaped: boolean;
  body?: { credentials?: { access_token?: string; refresh_token?: string } };
}

/** One REST call, bounded: status 0 means no answer within {@link REQUEST_BOUND_MS}. */
async function call(server: LatchkeyProcess, what: string, method: string, path: string, body?: unknown): Promise<Outcome> {
  const started = Date.now();
  try {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${env.secretKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_BOUND_MS),
    });
    const json = (await res.json().catch(() => undefined)) as { error?: { code?: unknown; message?: unknown } } | undefined;
    const shaped = typeof json?.error?.code === 'string' && typeof json.error.message === 'string';
    return {
      what,
      status: res.status,
      code: shaped ? String(json!.error!.code) : undefined,
      shaped,
      ms: Date.now() - started,
      body: json as Outcome['body'],
    };
  } catch {
    return { what, status: 0, shaped: false, ms: Date.now() - started };
  }
}

/** 2xx, or a 503 with the error shape: what a client can act on (use it, or retry later). */
const acceptable = (o: Outcome) => (o.status >= 200 && o.status < 300) || (o.status === 503 && o.shaped);
const ok = (o: Outcome) => o.status >= 200 && o.status < 300;

const importBody = (connectionId: string) => ({
  provider_config_key: 'keys',
  connection_id: connectionId,
  credentials: { type: 'API_KEY', apiKey: `key-${connectionId}` },
});

/** A client's pace: about five imports a second at most (refusals come back at once while the API server is down). */
const IMPORT_PACE_MS = 200;

/** Imports new connections one after the other until stopped; every outcome is kept. */
function importTraffic(server: LatchkeyProcess, prefix: string) {
  const outcomes: Outcome[] = [];
  let running = true;
  const done = (async () => {
    for (let n = 0; running; n++) {
      outcomes.push(await call(server, `${prefix}-${n}`, 'POST', '/connections', importBody(`${prefix}-${n}`)));
      await new Promise((r) => setTimeout(r, IMPORT_PACE_MS));
    }
  })();
  return {
    outcomes,
    async stop() {
      running = false;
      await done;
    },
  };
}

/** Polls /readyz of each process until stopped: (time, status) per process. */
function readyzWatch(targets: LatchkeyProcess[]) {
  const seen = new Map<string, Array<{ at: number; status: number }>>(targets.map((p) => [p.identity, []]));
  let running = true;
  const done = (async () => {
    while (running) {
      await Promise.all(
        targets.map(async (p) => {
          const status = await fetch(`${p.url}/readyz`, { signal: AbortSignal.timeout(5000) }).then(
            (r) => r.status,
            () => 0,
          );
          seen.get(p.identity)!.push({ at: Date.now(), status });
        }),
      );
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    seen,
    /** The first time after `since` that every process answered `status`. */
    async all(status: number, since: number, timeoutMs: number): Promise<number> {
      return eventually(() => {
        const times = targets.map((p) => seen.get(p.identity)!.find((s) => s.at >= since && s.status === status)?.at);
        return times.every((t) => t !== undefined) ? Math.max(...(times as number[])) : undefined;
      }, timeoutMs);
    },
    async stop() {
      running = false;
      await done;
    },
  };
}

/** Asks until the answer is 2xx (bounded); every answer on the way is kept in `log`. */
async function untilAccepted(ask: () => Promise<Outcome>, log: Outcome[], timeoutMs = 60_000): Promise<Outcome> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const o = await ask();
    log.push(o);
    if (ok(o)) return o;
    if (Date.now() > deadline)
      throw new Error(`${o.what} not accepted within ${timeoutMs} ms: last ${o.status} ${o.code ?? ''} after ${o.ms} ms`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Connections (with their Secret) as the API server has them, by connection ID. */
async function storedConnections(prefix: string): Promise<Map<string, number>> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  const list = (await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'connections' })) as {
    items: Array<{ metadata: { name: string }; spec: { connectionId: string } }>;
  };
  const secrets = new Set((await core.listNamespacedSecret({ namespace: ns.name })).items.map((s) => s.metadata?.name));
  const counts = new Map<string, number>();
  for (const c of list.items) {
    if (!c.spec.connectionId.startsWith(`${prefix}-`) || !secrets.has(c.metadata.name)) continue;
    counts.set(c.spec.connectionId, (counts.get(c.spec.connectionId) ?? 0) + 1);
  }
  return counts;
}

async function enqueueWebhooks(tag: string): Promise<string[]> {
  const outbox = new WebhookOutbox(kc);
  return Promise.all(
    Array.from({ length: WEBHOOKS }, async (_, i) => {
      const id = `msg_${randomUUID().replace(/-/g, '')}`;
      const body = JSON.stringify({ from: 'latchkey', type: 'auth', operation: 'creation', success: true, connectionId: `${tag}-${i}` });
      await outbox.enqueue(ns.name, { id, environment: env.name, body }, Date.now());
      return id;
    }),
  );
}

/** Imports the OAuth 2 connection whose forced refresh the scenario drives (token valid for an hour: no background refresh). */
async function importOAuth(server: LatchkeyProcess, connectionId: string) {
  const tokens = await oidc.mintTokens({ clientId: client.clientId });
  const res = await call(server, connectionId, 'POST', '/connections', {
    provider_config_key: 'oauth',
    connection_id: connectionId,
    credentials: {
      type: 'OAUTH2',
      access_token: tokens.accessToken,
      refresh_token: tokens.refreshToken,
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    },
  });
  expect(res.status).toBe(201);
}

const forceRefresh = (server: LatchkeyProcess, connectionId: string) =>
  call(server, `refresh ${connectionId}`, 'GET', `/connections/${connectionId}?provider_config_key=oauth&force_refresh=true`);

const refreshGrants = () => oidc.tokenCalls.filter((c) => c.grantType === 'refresh_token');

/** A control-plane component the scenario stops and starts again; `prefix` names the connections it imports. */
interface Component {
  name: string;
  prefix: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

const KUBE_APISERVER: Component = {
  name: 'kube-apiserver',
  prefix: 'api',
  stop: () => cp.stopApiServer(),
  start: () => cp.startApiServer(),
};
const ETCD: Component = { name: 'etcd', prefix: 'etcd', stop: () => cp.stopEtcd(), start: () => cp.startEtcd() };

/**
 * One restart under load: imports run throughout; the first webhook delivery of a batch stops the
 * component (so that delivery's bookkeeping meets a dead API server); while it is down a forced refresh
 * is asked; then it starts again and everything refused is retried.
 */
async function restartUnderLoad(component: Component) {
  const { prefix } = component;
  const { server, controller } = await startProcesses();
  await importOAuth(server, `${prefix}-oauth`);
  const grantsBefore = refreshGrants().length;
  const readyz = readyzWatch([server, controller]);
  const traffic = importTraffic(server, prefix);
  background.push(readyz, traffic);
  await eventually(() => traffic.outcomes.filter(ok).length >= 3, 60_000);

  let stoppedAt = 0;
  let stopping: Promise<void> | undefined;
  // Stopped once the first delivery reaches the receiver, but not before every webhook is enqueued: the
  // enqueues are the test's own writes, not the product's (on a loaded machine a delivery can arrive first).
  let enqueued = false;
  let arrived = false;
  const stop = () => {
    if (stopping) return;
    stoppedAt = Date.now();
    down = component;
    stopping = component.stop();
  };
  receiver.onRequest = () => {
    arrived = true;
    if (enqueued) stop();
  };
  const webhookIds = await enqueueWebhooks(prefix);
  enqueued = true;
  if (arrived) stop();
  await eventually(() => stoppedAt > 0, 60_000);
  await stopping;
  const refusedBefore = traffic.outcomes.filter((o) => !ok(o)).length;
  // Down: requests are refused with 503 within the bound; readyz says so (for kube-apiserver: asserted below).
  await eventually(() => traffic.outcomes.filter((o) => !ok(o)).length >= refusedBefore + 3, 120_000, 200);
  const refreshWhileDown = await forceRefresh(server, `${prefix}-oauth`);
  const notReadyAt = await readyz.all(503, stoppedAt, 30_000).catch(() => undefined);

  const startedAt = Date.now();
  await component.start();
  down = undefined;
  const upAt = Date.now();
  const readyAgainAt = await readyz.all(200, upAt, 120_000);
  await traffic.stop();
  await readyz.stop();
  receiver.onRequest = undefined;

  // Every answer was one a client can act on, in time.
  const outcomes = [...traffic.outcomes, refreshWhileDown];
  expect(outcomes.filter((o) => !acceptable(o)).map((o) => `${o.what}: ${o.status} ${o.code ?? ''} after ${o.ms} ms`)).toEqual([]);
  const refused = traffic.outcomes.filter((o) => !ok(o));
  expect(refused.length).toBeGreaterThan(0);

  // Retried after the restart: accepted; then every connection the traffic tried exists once, with its Secret.
  const retried: Outcome[] = [];
  for (const o of refused) await untilAccepted(() => call(server, o.what, 'POST', '/connections', importBody(o.what)), retried);
  const refreshAfter = await untilAccepted(() => forceRefresh(server, `${prefix}-oauth`), retried);
  expect(retried.filter((o) => !acceptable(o)).map((o) => `${o.what}: ${o.status} ${o.code ?? ''}`)).toEqual([]);
  const stored = await storedConnections(prefix);
  const tried = traffic.outcomes.map((o) => o.what);
  expect([...stored.keys()].sort()).toEqual([...tried, `${prefix}-oauth`].sort());
  expect([...stored.values()].every((n) => n === 1)).toBe(true);

  // The refresh: as many grants used at the provider as refreshes answered 200, none refused (no spent token replayed).
  const grants = refreshGrants().slice(grantsBefore);
  const answered200 = [refreshWhileDown, refreshAfter].filter(ok).length;
  expect(grants.filter((g) => g.status === 200)).toHaveLength(answered200);
  expect(grants.filter((g) => g.status !== 200)).toEqual([]);
  const secret = await kc.makeApiClient(CoreV1Api).readNamespacedSecret({
    namespace: ns.name,
    name: (await storedName(`${prefix}-oauth`))!,
  });
  const storedCredentials = JSON.parse(Buffer.from(secret.data!['credentials.json']!, 'base64').toString('utf8')) as {
    access_token: string;
  };
  expect(storedCredentials.access_token).toBe(refreshAfter.body?.credentials?.access_token);

  // Webhooks: each delivered with its id; a repeat only with the same id.
  await eventually(() => webhookIds.every((id) => receiver.delivered().some((w) => webhookIdOf(w) === id)), 120_000, 250);
  const perId = new Map<string, number>();
  for (const w of receiver.received.filter((r) => webhookIds.includes(webhookIdOf(r))))
    perId.set(webhookIdOf(w), (perId.get(webhookIdOf(w)) ?? 0) + 1);
  const duplicates = [...perId].filter(([, n]) => n > 1).map(([webhookId, times]) => ({ webhookId, times }));
  expect(receiver.received.filter((w) => webhookIdOf(w).length === 0)).toEqual([]);

  return {
    server,
    controller,
    readyz,
    outcomes,
    refused,
    retried,
    stored,
    grants,
    webhookIds,
    perId,
    duplicates,
    stoppedAt,
    notReadyAt,
    startedAt,
    upAt,
    readyAgainAt,
    refreshWhileDown,
  };
}

async function storedName(connectionId: string): Promise<string | undefined> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const list = (await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'connections' })) as {
    items: Array<{ metadata: { name: string }; spec: { connectionId: string } }>;
  };
  return list.items.find((c) => c.spec.connectionId === connectionId)?.metadata.name;
}

const count = (outcomes: Outcome[], pred: (o: Outcome) => boolean) => outcomes.filter(pred).length;
const codes = (outcomes: Outcome[]) => [...new Set(outcomes.filter((o) => !ok(o)).map((o) => o.code))].join(', ');

/** The figures of one restart for docs/reliability.md. */
function writeRestartScenario(
  component: Component,
  r: Awaited<ReturnType<typeof restartUnderLoad>>,
  meta: { scenario: string; faults: Record<string, number> },
): void {
  writeScenario({
    scenario: meta.scenario,
    title: `Control plane: ${component.name} stopped and started during imports, a refresh and webhooks`,
    faults: meta.faults,
    survived: true,
    counts: {
      requests: r.outcomes.length,
      answered2xx: count(r.outcomes, ok),
      answered503: count(r.outcomes, (o) => o.status === 503),
      answeredOther: count(r.outcomes, (o) => !acceptable(o)),
      retriedAccepted: count(r.retried, ok),
      connectionsStored: r.stored.size,
      refreshGrantsAtProvider: r.grants.length,
      webhooksDelivered: r.perId.size,
    },
    grantsLost: r.grants.filter((g) => g.status !== 200).length,
    webhooksLost: r.webhookIds.length - r.perId.size,
    duplicates: r.duplicates,
    takeoverMs: r.readyAgainAt - r.upAt,
    notes: [
      `503 codes: ${codes(r.outcomes)}; slowest answer ${Math.max(...r.outcomes.map((o) => o.ms))} ms`,
      r.notReadyAt === undefined
        ? `/readyz stayed 200 while ${component.name} was down: kube-apiserver kept the watches open (served from its watch cache), so the caches did not know they were stale`
        : `/readyz 503 on both ${r.notReadyAt - r.stoppedAt} ms after the stop, 200 on both ${r.readyAgainAt - r.upAt} ms after ${component.name} was ready (the "take-over" column)`,
      `refresh asked while down: ${r.refreshWhileDown.status} ${r.refreshWhileDown.code ?? ''}`,
    ],
  });
}

it('kube-apiserver restarted during imports, a refresh and webhook deliveries: 2xx or 503, nothing lost, /readyz truthful', async () => {
  const r = await restartUnderLoad(KUBE_APISERVER);
  // Down: both replicas said so, and said "ready" again only once kube-apiserver was back.
  expect(r.notReadyAt).toBeDefined();
  for (const p of [r.server, r.controller]) {
    const seen = r.readyz.seen.get(p.identity)!;
    // No "ready" while it was down: until its start began (start() returns a little after it serves,
    // and a replica may rightly be ready again in between).
    expect(seen.filter((s) => s.at > r.notReadyAt! && s.at < r.startedAt && s.status === 200)).toEqual([]);
    expect(seen.find((s) => s.at > r.notReadyAt! && s.at < r.upAt && s.status === 503)).toBeDefined();
  }
  writeRestartScenario(KUBE_APISERVER, r, { scenario: 'control-plane-restart-apiserver', faults: { apiServerRestart: 1 } });
}, 600_000);

it('etcd restarted during imports, a refresh and webhook deliveries: 2xx or 503, nothing lost, /readyz back to 200', async () => {
  const r = await restartUnderLoad(ETCD);
  writeRestartScenario(ETCD, r, { scenario: 'control-plane-restart-etcd', faults: { etcdRestart: 1 } });
}, 600_000);
