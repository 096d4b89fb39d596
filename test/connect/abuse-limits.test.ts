/**
 * Limits on what an untrusted client can do with a Connect session token or the session endpoint,
 * against a real control plane: connections per session are capped (counted across replicas by
 * the Connection label), /connect/api/* is rate-limited per session, and session creation per
 * namespace; over a limit the answer is 429 with Retry-After and the error body.
 */
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { SESSION_LABEL } from '../../src/connect/session-quota.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
const PROVIDER = `limits-key-${process.pid}`;

beforeAll(async () => {
  await applyProvider(kc, PROVIDER, { displayName: 'Keyed', authMode: 'API_KEY' });
});

afterAll(async () => {
  await deleteProvider(kc, PROVIDER);
});

interface Tenant {
  ns: Awaited<ReturnType<typeof createTestNamespace>>;
  replica: Replica;
}
const tenants: Tenant[] = [];

afterEach(async () => {
  for (const t of tenants.splice(0)) {
    await t.replica.stop();
    await t.ns.delete();
  }
});

/** A namespace of its own (the limits count per namespace) with its Environment, an API-key Integration and a replica serving it. */
async function tenant(limits: Partial<Record<'connectApiRatePerSession' | 'connectApiRatePerNamespace', number>> = {}): Promise<Tenant> {
  const ns = await createTestNamespace(kc, 'limits');
  // A session connects each integration once (test/connect/session-single-use.test.ts): three to reach the cap.
  for (const id of ['keyed', 'keyed-2', 'keyed-3']) await createIntegration(kc, ns.name, id, { provider: PROVIDER });
  const env = await createEnvironment(kc, ns.name);
  const replica = await startReplica(kc, {
    namespaces: [ns.name],
    key: env.secretKey,
    config: {
      connectMaxConnectionsPerSession: 2,
      connectApiRatePerSession: 6,
      connectApiRatePerNamespace: 1000,
      sessionCreateRatePerNamespace: 4,
      ...limits,
    },
  });
  const t = { ns, replica };
  tenants.push(t);
  await eventually(
    async () =>
      (await replica.call('GET', '/providers')).status === 200 &&
      replica.ctx.catalog.getIntegration(ns.name, 'keyed-3') &&
      replica.ctx.catalog.listEnvironments(ns.name).length > 0,
  );
  return t;
}

async function newSession({ replica }: Tenant): Promise<{ status: number; token?: string; body: any; headers: Headers }> {
  const res = await replica.call('POST', '/connect/sessions', { body: { end_user: { id: 'abuser' } } });
  return { ...res, token: res.body?.data?.token };
}

function connectApi({ replica }: Tenant, token: string, path: string, body?: unknown) {
  return fetch(`${replica.url}/connect/api/${path}`, {
    method: body ? 'POST' : 'GET',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
}

it('caps the connections one session creates, and rate-limits its requests', async () => {
  const t = await tenant();
  const { ns, replica } = t;
  const first = await newSession(t);
  expect(first.status).toBe(201);
  const token = first.token!;
  for (const integration of ['keyed', 'keyed-2']) {
    const res = await connectApi(t, token, 'forms', { integration, values: { apiKey: `key-${integration}-abcdef` } });
    expect(res.status).toBe(201);
  }
  const third = await connectApi(t, token, 'forms', { integration: 'keyed-3', values: { apiKey: 'key-3-abcdef' } });
  expect(third.status).toBe(403);
  expect(((await third.json()) as any).error).toMatchObject({ code: 'session_connection_limit', message: expect.any(String) });
  const mine = replica.ctx.connectionScans.listConnections(ns.name).filter((c) => c.metadata.labels?.[SESSION_LABEL]);
  expect(mine).toHaveLength(2);

  // 6 requests a minute per session: three were used, three more pass, the next is refused.
  for (let i = 0; i < 3; i++) expect((await connectApi(t, token, 'session')).status).toBe(200);
  const limited = await connectApi(t, token, 'session');
  expect(limited.status).toBe(429);
  expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(((await limited.json()) as any).error).toMatchObject({ code: 'rate_limited', message: expect.any(String) });

  // Another session of the same namespace is not affected by either limit.
  const other = await newSession(t);
  const res = await connectApi(t, other.token!, 'forms', { integration: 'keyed', values: { apiKey: 'key-other-abcdef' } });
  expect(res.status).toBe(201);
  expect(replica.ctx.connectionScans.listConnections(ns.name)).toHaveLength(3);
});

it('rate-limits session creation per namespace with 429 and Retry-After', async () => {
  const t = await tenant();
  // The bucket holds 4 a minute: the fifth is refused.
  const statuses: number[] = [];
  let last: Awaited<ReturnType<typeof newSession>> | undefined;
  for (let i = 0; i < 5; i++) {
    last = await newSession(t);
    statuses.push(last.status);
  }
  expect(statuses).toEqual([201, 201, 201, 201, 429]);
  expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(last!.body.error).toMatchObject({ code: 'rate_limited' });
});

it("answers a session's other end users while one session floods the Connect API: its own budget runs out, not the environment's", async () => {
  // The defaults: 60 a minute per session, 1200 per namespace.
  const t = await tenant({ connectApiRatePerSession: 60, connectApiRatePerNamespace: 1200 });
  const [a, b] = [(await newSession(t)).token!, (await newSession(t)).token!];
  const status = async (token: string) => {
    const res = await connectApi(t, token, 'session');
    await res.arrayBuffer();
    return res.status;
  };
  // Session A sends 1,500 requests, 50 at a time; session B sends one after each 100 of A's, and 5 after.
  const fromA: number[] = [];
  const fromB: number[] = [];
  for (let sent = 0; sent < 1500; sent += 50) {
    fromA.push(...(await Promise.all(Array.from({ length: 50 }, () => status(a)))));
    if ((sent + 50) % 100 === 0) fromB.push(await status(b));
  }
  for (let i = 0; i < 5; i++) fromB.push(await status(b));

  expect(fromB).toHaveLength(20);
  expect(fromB.filter((s) => s === 429)).toHaveLength(0);
  expect(fromB.every((s) => s === 200)).toBe(true);
  // A had its own burst (60) and what refilled meanwhile; the rest were refused.
  expect(fromA.filter((s) => s === 200).length).toBeLessThan(200);
  expect(fromA.filter((s) => s === 429).length).toBeGreaterThan(1300);
  expect(fromA.every((s) => s === 200 || s === 429)).toBe(true);
});
