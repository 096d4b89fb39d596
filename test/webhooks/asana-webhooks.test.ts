/**
 * Asana's webhooks end to end, against the doc-true Asana simulator (test/support/simulators/asana.ts)
 * on app.asana.com and the shipped manifest unchanged: the application creates the webhook through
 * Latchkey's proxy at the path Asana documents (`POST /api/1.0/webhooks`), which opens the
 * Integration's handshake window; Asana's handshake, sent while the creation is in flight, is answered
 * (by another replica); events signed with its secret go to the creating connection. A handshake
 * outside a window, or one racing Asana's own, leaves nothing kept.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { HandshakeWindows, handshakeSecrets, MAX_HANDSHAKE_SECRETS } from '../../src/k8s/handshake-windows.js';
import { WebhookOutbox } from '../../src/k8s/webhook-outbox.js';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { createEnvironment, createIntegration, applyProvider, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { catalogSpec } from '../support/catalog-files.js';
import { ASANA, type SimulatedRequest } from '../support/provider-simulators.js';
import { startReplica, type Replica } from '../support/replica.js';
import { signatureValid, webhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver.js';
import { asana } from '../support/simulators/asana.js';
import { startSimulators, type SimulatorHost } from '../support/simulators/framework.js';

const kc = testKubeConfig();
/** Cluster-scoped: named for this file, so parallel files do not share it. */
const PROVIDER = 'awh-asana';
const integration = 'asana-events';
const creator = 'conn-asana-creator';
const sim = asana();
let host: SimulatorHost;
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let receiver: WebhookReceiver;
/** The replica the application calls (the proxy). */
let replica: Replica;
/** A second server replica: the handshake reaches it while the creation goes through the first one. */
let other: Replica;
/** Each connection's access token, as Asana issued it. */
const tokens = new Map<string, string>();

const secretKeys = async () =>
  Object.keys((await kc.makeApiClient(CoreV1Api).readNamespacedSecret({ namespace: ns.name, name: `${integration}-client` })).data ?? {});
const target = () => `${other.url}/webhooks/${ns.name}/${integration}`;
const forwards = () => receiver.delivered().filter((w) => w.json.type === 'forward' && w.json.providerConfigKey === integration);

async function send(r: SimulatedRequest): Promise<{ status: number; text: string }> {
  const res = await fetch(r.url, { method: r.method, headers: r.headers, body: r.body });
  return { status: res.status, text: await res.text() };
}

/** `POST /api/1.0/webhooks` to Asana through the first replica's proxy, as the application calls it (Asana's curl example: a form). */
const createWebhook = (connectionId = creator) =>
  fetch(`${replica.url}/proxy/api/1.0/webhooks`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${env.secretKey}`,
      'connection-id': connectionId,
      'provider-config-key': integration,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ resource: '8675309', target: target() }).toString(),
  });

/** An access token Asana issued: its authorization code grant, run against the simulator (no browser: the consent page's link is followed). */
async function asanaToken(): Promise<{ access_token: string; refresh_token: string }> {
  const redirectUri = 'https://app.example.com/callback';
  const authorize = new URL('https://app.asana.com/-/oauth_authorize');
  for (const [k, v] of Object.entries({ client_id: sim.client.clientId, redirect_uri: redirectUri, response_type: 'code', state: 's' }))
    authorize.searchParams.set(k, v);
  const page = await (await replica.ctx.fetch(authorize)).text();
  const allow = /id="allow" href="([^"]+)"/.exec(page)![1]!.replace(/&amp;/g, '&');
  const code = new URL(allow).searchParams.get('code')!;
  const answer = await replica.ctx.fetch('https://app.asana.com/-/oauth_token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: sim.client.clientId,
      client_secret: sim.client.clientSecret,
      redirect_uri: redirectUri,
      code,
    }).toString(),
  });
  expect(answer.status).toBe(200);
  return (await answer.json()) as { access_token: string; refresh_token: string };
}

beforeAll(async () => {
  host = await startSimulators([sim]);
  ns = await createTestNamespace(kc, 'asana-webhooks');
  receiver = await webhookReceiver();
  await receiver.listen();
  env = await createEnvironment(kc, ns.name, { webhooks: { url: receiver.url } });
  // The shipped manifest as it is: only app.asana.com's address differs (the egress guard's resolver).
  await applyProvider(kc, PROVIDER, catalogSpec('asana'));
  await createIntegration(kc, ns.name, integration, { provider: PROVIDER }, { ...sim.client });
  replica = await startReplica(kc, {
    namespaces: [ns.name],
    components: ['server', 'webhooks'],
    webhookPollMs: 100,
    selfBaseUrl: true,
    egress: host.egressGuard(),
  });
  other = await startReplica(kc, { namespaces: [ns.name], components: ['server'], selfBaseUrl: true, egress: host.egressGuard() });
  for (const id of [creator, `${creator}-other`]) {
    const token = await asanaToken();
    tokens.set(id, token.access_token);
    await replica.ctx.connections.createConnection({
      namespace: ns.name,
      spec: {
        integration,
        provider: PROVIDER,
        connectionId: id,
        authMode: 'OAUTH2',
        endUser: { id: `user-of-${id}`, tags: {} },
        connectionConfig: {},
      },
      credentials: {
        type: 'OAUTH2',
        access_token: token.access_token,
        refresh_token: token.refresh_token,
        expires_at: new Date(Date.now() + 3600_000).toISOString(),
      },
    });
  }
  await eventually(() =>
    [replica, other].every(
      (r) =>
        r.ctx.connections.getConnection(ns.name, integration, `${creator}-other`) &&
        r.ctx.catalog.getProvider(PROVIDER) &&
        r.ctx.catalog.getReferencedSecret(ns.name, `${integration}-client`) &&
        r.ctx.catalog.readSecretValue(ns.name, `${env.name}-keys`, 'webhookSigningKey'),
    ),
  );
}, 90_000);

afterAll(async () => {
  await other?.stop();
  await replica?.stop();
  await receiver?.close();
  await host?.close();
  await deleteProvider(kc, PROVIDER);
  await ns?.delete();
});

it('the shipped manifest opens the window on the creation Asana documents, POST https://app.asana.com/api/1.0/webhooks', () => {
  expect(catalogSpec('asana').webhooks?.handshake?.opensOn).toEqual({ method: 'POST', path: '/api/1.0/webhooks' });
  expect(catalogSpec('asana').proxy?.baseUrl).toBe('https://app.asana.com');
});

it('refuses a handshake outside a creation window with 401 and stores nothing; an event signed with its secret is refused', async () => {
  const secret = 'b537207f20cbfa02357cf448134da559e8bd39d61597dcd5631b8012eae53e81';
  const answer = await send(ASANA.handshake(target(), secret));
  expect(answer.status).toBe(401);
  expect(JSON.parse(answer.text)).toEqual({
    error: { code: 'handshake_refused', message: 'No webhook creation of this integration is in flight through Latchkey.' },
  });
  expect((await secretKeys()).filter((k) => k !== 'clientId' && k !== 'clientSecret')).toEqual([]);
  expect((await send(ASANA.sign(ASANA.event(), secret, target()))).status).toBe(401);
  const logs = await eventually(async () => {
    const res = await replica.call('GET', `/logs?integration=${integration}`, { key: env.secretKey });
    const text = (res.body.logs as Array<{ messages: string[] }>).flatMap((e) => e.messages).join('\n');
    return text.includes('handshake refused') ? text : undefined;
  });
  expect(logs).not.toContain(secret);
});

it('a real creation through one replica’s proxy opens the window for the handshake another replica answers; its events go to the creating connection', async () => {
  const before = forwards().length;
  const created = await createWebhook();
  expect(created.status).toBe(201);
  expect(await created.json()).toMatchObject({ data: { resource: { gid: '8675309' }, target: target() } });
  const creation = sim.webhooks.creations.at(-1)!;
  expect(creation).toMatchObject({ target: target(), handshakeStatus: 200, confirmed: true });
  // Asana saw the connection's own token on its documented path.
  const call = sim.state.requests.filter((r) => r.method === 'POST' && r.path === '/api/1.0/webhooks').at(-1)!;
  expect(call.headers.authorization).toBe(`Bearer ${tokens.get(creator)}`);
  // Kept once the proxied call ended: one handshake secret, and no window left open.
  await eventually(async () => (await secretKeys()).some((k) => k.startsWith('handshakeSecret.')));
  expect((await secretKeys()).filter((k) => k.startsWith('handshakeSecret.') || k === 'webhookHandshakeWindow')).toHaveLength(1);

  const genuine = ASANA.sign(ASANA.event(), creation.secret, target());
  // A heartbeat is answered and not forwarded (200 once this replica's cache has the kept secret).
  await eventually(async () => (await send(ASANA.sign(ASANA.heartbeat(), creation.secret, target()))).status === 200);
  // Refused: tampered with, unsigned, signed with another secret; a handshake now that the window is closed.
  expect((await send({ ...genuine, body: genuine.body.replace('"changed"', '"removed"') })).status).toBe(401);
  expect((await send({ ...genuine, headers: { 'content-type': 'application/json' } })).status).toBe(401);
  expect((await send(ASANA.sign(ASANA.event(), `${creation.secret.slice(1)}0`, target()))).status).toBe(401);
  expect((await send(ASANA.handshake(target(), 'f'.repeat(64)))).status).toBe(401);
  expect((await send(genuine)).status).toBe(200);
  const [forward] = await eventually(() => (forwards().length > before ? forwards().slice(before) : undefined));
  expect(signatureValid(env.webhookSigningKey, forward!)).toBe(true);
  expect(forward!.json).toMatchObject({
    type: 'forward',
    provider: PROVIDER,
    connectionId: creator,
    connections: [{ connectionId: creator, endUser: { endUserId: `user-of-${creator}`, tags: {} } }],
    payload: JSON.parse(genuine.body),
  });
  await eventually(async () => (await new WebhookOutbox(kc).list([ns.name])).length === 0);
  expect(forwards().length).toBe(before + 1);
});

it('a second creation while one is in flight is answered 409 (a handshake names no creation) and sends nothing', async () => {
  const calls = sim.webhooks.creations.length;
  let second: { status: number; body: unknown } | undefined;
  sim.webhooks.beforeHandshake = async () => {
    const res = await createWebhook(`${creator}-other`);
    second = { status: res.status, body: await res.json() };
  };
  try {
    expect((await createWebhook()).status).toBe(201);
  } finally {
    sim.webhooks.beforeHandshake = undefined;
  }
  expect(second).toEqual({
    status: 409,
    body: {
      error: {
        code: 'webhook_creation_in_progress',
        message: 'Another webhook creation of this integration is in flight; retry when it ends',
      },
    },
  });
  expect(sim.webhooks.creations.length).toBe(calls + 1);
  // The first one's window closes (its secret kept) once its proxied call has ended.
  await eventually(async () => !(await secretKeys()).includes('webhookHandshakeWindow'));
});

it('a handshake racing into the window first is answered, but the creation then fails and nothing is kept', async () => {
  const kept = (await secretKeys()).filter((k) => k.startsWith('handshakeSecret.'));
  const forged = 'a'.repeat(64);
  let forgedStatus = 0;
  sim.webhooks.beforeHandshake = async (to) => {
    forgedStatus = (await send(ASANA.handshake(to, forged))).status;
  };
  try {
    const created = await createWebhook(`${creator}-other`);
    // The window takes one secret: Asana's own handshake is refused, so Asana refuses the creation.
    expect(forgedStatus).toBe(200);
    expect(sim.webhooks.creations.at(-1)).toMatchObject({ handshakeStatus: 401, confirmed: false });
    expect(created.status).toBe(400);
  } finally {
    sim.webhooks.beforeHandshake = undefined;
  }
  await eventually(async () => !(await secretKeys()).includes('webhookHandshakeWindow'));
  expect((await secretKeys()).filter((k) => k.startsWith('handshakeSecret.'))).toEqual(kept);
  expect((await send(ASANA.sign(ASANA.event(), forged, target()))).status).toBe(401);
});

it('a window expires on its own, takes one secret, and an Integration keeps at most 20 secrets, the oldest going first', async () => {
  const name = 'asana-windows';
  await kc
    .makeApiClient(CoreV1Api)
    .createNamespacedSecret({ namespace: ns.name, body: { metadata: { name }, stringData: { clientId: 'x' } } });
  const windows = new HandshakeWindows(replica.ctx.caches);
  const t0 = 1_800_000_000_000;
  const stale = (await windows.open(ns.name, name, 'c-stale', t0, 30_000))!;
  // Past its 30 s nothing is taken, and another creation may open the window (the stale one's close then changes nothing).
  expect(await windows.accept(ns.name, name, 'late-secret', t0 + 30_000)).toBe(false);
  const first = (await windows.open(ns.name, name, 'c-0', t0 + 30_001, 30_000))!;
  expect(await windows.close(ns.name, name, stale, true, t0 + 30_002)).toBe(false);
  expect(await windows.accept(ns.name, name, 'secret-0', t0 + 30_003)).toBe(true);
  expect(await windows.accept(ns.name, name, 'secret-0-again', t0 + 30_004)).toBe(false);
  expect(await windows.close(ns.name, name, first, true, t0 + 30_005)).toBe(true);
  for (let i = 1; i <= MAX_HANDSHAKE_SECRETS; i++) {
    const id = (await windows.open(ns.name, name, `c-${i}`, t0 + 40_000 + i, 30_000))!;
    expect(await windows.accept(ns.name, name, `secret-${i}`, t0 + 40_000 + i)).toBe(true);
    await windows.close(ns.name, name, id, true, t0 + 40_000 + i);
  }
  const secret = await kc.makeApiClient(CoreV1Api).readNamespacedSecret({ namespace: ns.name, name });
  const kept = handshakeSecrets(secret);
  expect(kept).toHaveLength(MAX_HANDSHAKE_SECRETS);
  expect(kept.map((k) => k.connectionId)).not.toContain('c-0');
  expect(kept[0]).toMatchObject({ secret: `secret-${MAX_HANDSHAKE_SECRETS}`, connectionId: `c-${MAX_HANDSHAKE_SECRETS}` });
  expect(Object.keys(secret.data ?? {})).not.toContain('webhookHandshakeWindow');
});
