/**
 * Wrong secret keys are throttled per source address, on the REST API (express routes, the direct
 * fetch, the proxy) and the dashboard sign-in, and right keys never are: 100 wrong keys in a row from
 * one address, the later ones 429 `too_many_failed_authentications` with Retry-After; then the right
 * keys of two Environments from that same address, at once, are served; wrong keys from it keep
 * getting 429, and the metric counts both. Many callers share one address in a cluster (a sidecar, a
 * node's SNAT), so one of them guessing must not lock the others out. Requests leave from chosen
 * loopback addresses (127.0.0.x).
 */
import { request } from 'node:http';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { createEnvironment, type TestEnvironment } from '../../dev/fixtures.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let other: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let otherEnv: TestEnvironment;
let replica: Replica;

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'auth-throttle');
  other = await createTestNamespace(kc, 'auth-throttle-b');
  env = await createEnvironment(kc, ns.name);
  otherEnv = await createEnvironment(kc, other.name);
  replica = await startReplica(kc, { namespaces: [ns.name, other.name], key: env.secretKey });
  // Ready once both keys open (from 127.0.0.9: the addresses under test start with no failures).
  await eventually(async () => (await send('127.0.0.9', 'GET', '/providers', env.secretKey)).status === 200);
  await eventually(async () => (await send('127.0.0.9', 'GET', '/providers', otherEnv.secretKey)).status === 200);
});

afterAll(async () => {
  await replica?.stop();
  await ns?.delete();
  await other?.delete();
});

/** One request from `from`: a loopback address the client socket binds to. */
function send(from: string, method: string, path: string, key?: string, body?: unknown) {
  const payload = body ? JSON.stringify(body) : undefined;
  return new Promise<{ status: number; retryAfter: string | undefined; body: any }>((resolve, reject) => {
    const req = request(
      `${replica.url}${path}`,
      {
        method,
        localAddress: from,
        agent: false,
        headers: {
          ...(key !== undefined ? { authorization: `Bearer ${key}` } : {}),
          ...(path.startsWith('/dashboard/') ? { 'x-latchkey-dashboard': '1' } : {}),
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            retryAfter: res.headers['retry-after'],
            body: text ? (JSON.parse(text) as unknown) : undefined,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function failures(): Promise<Record<string, number>> {
  const values = (await replica.ctx.metrics.getSingleMetric('latchkey_auth_failures_total')!.get()).values;
  return Object.fromEntries(values.map((v) => [`${v.labels.surface}/${v.labels.result}`, v.value]));
}

const guess = (i: number) => `sk_guess_${i.toString().padStart(4, '0')}_0123456789abcdef`;

it('answers 100 wrong keys from one address 401 then 429; the right keys of two Environments from it are served at once', async () => {
  const statuses: number[] = [];
  let last: Awaited<ReturnType<typeof send>> | undefined;
  for (let i = 0; i < 100; i++) {
    last = await send('127.0.0.2', 'GET', '/connections', guess(i));
    statuses.push(last.status);
  }
  expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
  expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(75);
  expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
  expect(last!.status).toBe(429);
  expect(last!.body.error).toMatchObject({ code: 'too_many_failed_authentications', message: expect.any(String) });
  expect(Number(last!.retryAfter)).toBeGreaterThanOrEqual(1);
  expect(JSON.stringify(last!.body)).not.toContain('sk_guess');

  // The same address, at once, with the right keys: this Environment's and another's, on an express
  // route, the direct fetch and the proxy. Each is answered as it would be from any address.
  const [mine, theirs, fetched, proxied] = await Promise.all([
    send('127.0.0.2', 'GET', '/connections', env.secretKey),
    send('127.0.0.2', 'GET', '/connections', otherEnv.secretKey),
    send('127.0.0.2', 'GET', '/connections/nobody?provider_config_key=none', otherEnv.secretKey),
    send('127.0.0.2', 'GET', '/proxy/anything', env.secretKey),
  ]);
  expect([mine.status, theirs.status]).toEqual([200, 200]);
  expect(mine.body.connections).toEqual([]);
  expect(theirs.body.connections).toEqual([]);
  const [fetchedElsewhere, proxiedElsewhere] = await Promise.all([
    send('127.0.0.3', 'GET', '/connections/nobody?provider_config_key=none', otherEnv.secretKey),
    send('127.0.0.3', 'GET', '/proxy/anything', env.secretKey),
  ]);
  expect(fetched.status).not.toBe(429);
  expect([fetched.status, fetched.body]).toEqual([fetchedElsewhere.status, fetchedElsewhere.body]);
  expect(proxied.status).not.toBe(429);
  expect([proxied.status, proxied.body]).toEqual([proxiedElsewhere.status, proxiedElsewhere.body]);

  // Wrong keys from that address keep getting 429, on every surface of the REST API.
  for (const path of ['/connections', '/connections/nobody?provider_config_key=none', '/proxy/anything']) {
    const wrong = await send('127.0.0.2', 'GET', path, guess(1000));
    expect([wrong.status, wrong.body.error.code]).toEqual([429, 'too_many_failed_authentications']);
  }
  // Another address is not affected.
  expect((await send('127.0.0.3', 'GET', '/connections', 'sk_one_wrong_key_0123456789abcdef')).status).toBe(401);

  const counted = await failures();
  expect(counted['rest/rejected']).toBeGreaterThanOrEqual(21);
  expect(counted['rest/throttled']).toBeGreaterThan(78);
  const text = await replica.ctx.metrics.metrics();
  expect(text).not.toContain('sk_guess');
});

it('throttles wrong keys at the dashboard sign-in and still signs in a right one from that address', async () => {
  const signIn = (from: string, key: string) => send(from, 'POST', '/dashboard/api/session', undefined, { secret_key: key });
  const statuses: number[] = [];
  for (let i = 0; i < 40; i++) statuses.push((await signIn('127.0.0.4', `sk_dash_guess_${i}_0123456789`)).status);
  expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
  expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(15);
  const [right, otherRight] = await Promise.all([signIn('127.0.0.4', env.secretKey), signIn('127.0.0.4', otherEnv.secretKey)]);
  expect([right.status, right.body]).toEqual([201, { namespace: ns.name, environment: 'test' }]);
  expect([otherRight.status, otherRight.body]).toEqual([201, { namespace: other.name, environment: 'test' }]);
  const wrong = await signIn('127.0.0.4', 'sk_dash_guess_again_0123456789');
  expect([wrong.status, wrong.body.error.code]).toEqual([429, 'too_many_failed_authentications']);
  // One budget per address for both surfaces: a wrong key on the REST API from that address is 429 too.
  expect((await send('127.0.0.4', 'GET', '/providers', 'sk_rest_guess_0123456789abcdef')).status).toBe(429);
  expect((await send('127.0.0.4', 'GET', '/providers', env.secretKey)).status).toBe(200);

  const counted = await failures();
  expect(counted['dashboard/rejected']).toBeGreaterThanOrEqual(20);
  expect(counted['dashboard/throttled']).toBeGreaterThan(15);
});
