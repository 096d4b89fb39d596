/**
 * Wrong secret keys are throttled per source address, on the REST API (express routes and the direct
 * fetch) and the dashboard sign-in: 300 wrong keys in a row from one address, the later ones 429
 * `too_many_failed_authentications` with Retry-After before any key is checked, a right key from that
 * address too (the address is throttled, not the key), another loopback address unaffected, and the
 * metric counts both. Requests leave from chosen loopback addresses (127.0.0.x).
 */
import { request } from 'node:http';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { createEnvironment, type TestEnvironment } from '../../dev/fixtures.js';
import { startReplica, type Replica } from '../support/replica.js';

const kc = testKubeConfig();
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let replica: Replica;

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'auth-throttle');
  env = await createEnvironment(kc, ns.name);
  replica = await startReplica(kc, { namespaces: [ns.name], key: env.secretKey });
  // Ready once the key opens (from 127.0.0.9: the addresses under test start with no failures).
  await eventually(async () => (await send('127.0.0.9', 'GET', '/providers', env.secretKey)).status === 200);
});

afterAll(async () => {
  await replica?.stop();
  await ns?.delete();
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

it('throttles 300 wrong keys in a row on the REST API; a right key from that address waits too, another address does not', async () => {
  const statuses: number[] = [];
  let last: Awaited<ReturnType<typeof send>> | undefined;
  for (let i = 0; i < 300; i++) {
    last = await send('127.0.0.2', 'GET', '/connections', `sk_guess_${i.toString().padStart(4, '0')}_0123456789abcdef`);
    statuses.push(last.status);
  }
  expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
  expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(270);
  expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
  expect(last!.status).toBe(429);
  expect(last!.body.error).toMatchObject({ code: 'too_many_failed_authentications', message: expect.any(String) });
  expect(Number(last!.retryAfter)).toBeGreaterThanOrEqual(1);
  expect(JSON.stringify(last!.body)).not.toContain('sk_guess');

  // The same address with the right key: refused before the key is looked at (express route and direct fetch).
  expect((await send('127.0.0.2', 'GET', '/providers', env.secretKey)).status).toBe(429);
  expect((await send('127.0.0.2', 'GET', '/connections/anyone?provider_config_key=none', env.secretKey)).status).toBe(429);
  // Another address is not affected.
  expect((await send('127.0.0.3', 'GET', '/providers', env.secretKey)).status).toBe(200);
  expect((await send('127.0.0.3', 'GET', '/connections', 'sk_one_wrong_key_0123456789abcdef')).status).toBe(401);

  const counted = await failures();
  expect(counted['rest/rejected']).toBeGreaterThanOrEqual(21);
  expect(counted['rest/throttled']).toBeGreaterThan(270);
  const text = await replica.ctx.metrics.metrics();
  expect(text).not.toContain('sk_guess');
});

it('throttles wrong keys at the dashboard sign-in, and a right one from that address while throttled', async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 40; i++) {
    statuses.push(
      (await send('127.0.0.4', 'POST', '/dashboard/api/session', undefined, { secret_key: `sk_dash_guess_${i}_0123456789` })).status,
    );
  }
  expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
  expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(15);
  const right = await send('127.0.0.4', 'POST', '/dashboard/api/session', undefined, { secret_key: env.secretKey });
  expect(right.status).toBe(429);
  expect(right.body.error.code).toBe('too_many_failed_authentications');
  expect((await send('127.0.0.5', 'POST', '/dashboard/api/session', undefined, { secret_key: env.secretKey })).status).toBe(201);
  // One budget per address for both surfaces: the REST API from that address is refused too.
  expect((await send('127.0.0.4', 'GET', '/providers', env.secretKey)).status).toBe(429);

  const counted = await failures();
  expect(counted['dashboard/rejected']).toBeGreaterThanOrEqual(20);
  expect(counted['dashboard/throttled']).toBeGreaterThan(15);
});
