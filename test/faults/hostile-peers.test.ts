/**
 * One hostile provider and one hostile end user must not hurt anybody else. A bounded run against a
 * real control plane and one Latchkey replica (server and controller, as `npm start` runs them)
 * serving two tenants:
 * - the attacking tenant's providers answer a 100 MB token answer (read only up to the limit,
 *   `provider_answer_too_large`, nothing stored) and `expires_in: 0` for the whole run (refreshed at
 *   most once per refresh floor per connection);
 * - one of its end users sends 1,500 Connect API requests with one session token (its own budget is
 *   spent, nobody else's);
 * - meanwhile the other tenant fetches, imports and uses its Connect UI at a steady rate, and a second
 *   end user of the attacking tenant uses the Connect UI: both count their errors, and must count 0.
 * The run lasts 5 minutes (`LATCHKEY_HOSTILE_RUN_SECONDS` shortens it locally) with the default
 * refresh floor of 60 s.
 */
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { startReplica, type Replica } from '../support/replica.js';
import { startUpstream, type Upstream } from '../support/servers/upstream.js';

const kc = testKubeConfig();
const RUN_MS = Number(process.env.LATCHKEY_HOSTILE_RUN_SECONDS ?? 300) * 1000;
const FLOOR_S = 60;
const HUGE_BYTES = 100 * 1024 * 1024;
const SHORT_LIVED = 5;
const pid = process.pid;
const PROVIDERS = {
  huge: `hostile-huge-${pid}`,
  instant: `hostile-instant-${pid}`,
  steady: `steady-oauth-${pid}`,
  key: `steady-key-${pid}`,
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let victimNs: Awaited<ReturnType<typeof createTestNamespace>>;
let attackerNs: Awaited<ReturnType<typeof createTestNamespace>>;
let victim: TestEnvironment;
let attacker: TestEnvironment;
let peer: Upstream;
let replica: Replica;
/** Bytes the 100 MB token endpoint wrote before Latchkey hung up, per answer. */
const hugeWritten: number[] = [];
/** Token calls of the `expires_in: 0` provider, by connection ID. */
const instantCalls = new Map<string, number>();

beforeAll(async () => {
  [victimNs, attackerNs] = await Promise.all([createTestNamespace(kc, 'hostile-victim'), createTestNamespace(kc, 'hostile-attacker')]);
  peer = await startUpstream();
  // A token answer of 100 MB, written as the reader takes it: it stops when Latchkey hangs up.
  peer.on('/huge/token', async (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    let written = 0;
    const chunk = Buffer.alloc(64 * 1024, 'a');
    res.write('{"access_token":"');
    let closed = false;
    const gone = new Promise((r) => res.once('close', r)).then(() => (closed = true));
    while (written < HUGE_BYTES && !closed) {
      if (!res.write(chunk)) await Promise.race([new Promise((r) => res.once('drain', r)), gone]);
      written += chunk.length;
    }
    hugeWritten.push(written);
    if (!closed) res.end('","token_type":"Bearer","expires_in":3600}');
  });
  // Tokens that are expired when issued. The refresh token names its connection: `rt.<id>.<n>`.
  peer.on('/instant/token', (_req, res, body) => {
    const [, id = '', n = '0'] = (new URLSearchParams(body.toString('utf8')).get('refresh_token') ?? '').split('.');
    instantCalls.set(id, (instantCalls.get(id) ?? 0) + 1);
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify({ access_token: `at.${id}.${Number(n) + 1}`, refresh_token: `rt.${id}.${Number(n) + 1}`, expires_in: 0 }));
  });
  for (const name of ['huge', 'instant', 'steady'] as const) {
    await applyProvider(kc, PROVIDERS[name], {
      displayName: `Hostile peers ${name}`,
      authMode: 'OAUTH2',
      authorizationUrl: `${peer.origin}/${name}/authorize`,
      tokenUrl: `${peer.origin}/${name}/token`,
    });
  }
  await applyProvider(kc, PROVIDERS.key, { displayName: 'Steady API key', authMode: 'API_KEY' });
  [victim, attacker] = await Promise.all([createEnvironment(kc, victimNs.name), createEnvironment(kc, attackerNs.name)]);
  const client = { clientId: 'hostile-client', clientSecret: 'hostile-client-secret-0123456789' };
  await createIntegration(kc, attackerNs.name, 'huge', { provider: PROVIDERS.huge }, client);
  await createIntegration(kc, attackerNs.name, 'instant', { provider: PROVIDERS.instant }, client);
  await createIntegration(kc, attackerNs.name, 'keys', { provider: PROVIDERS.key });
  await createIntegration(kc, victimNs.name, 'crm', { provider: PROVIDERS.steady }, client);
  await createIntegration(kc, victimNs.name, 'keys', { provider: PROVIDERS.key });
  replica = await startReplica(kc, {
    namespaces: [victimNs.name, attackerNs.name],
    components: ['server', 'controller'],
    config: { refreshFloorSeconds: FLOOR_S },
  });
  await eventually(
    () =>
      replica.ctx.catalog.getIntegration(attackerNs.name, 'instant') &&
      replica.ctx.catalog.getIntegration(victimNs.name, 'keys') &&
      replica.ctx.catalog.getProvider(PROVIDERS.key),
  );
});

afterAll(async () => {
  await replica?.stop();
  await peer?.close();
  await Promise.all(Object.values(PROVIDERS).map((p) => deleteProvider(kc, p)));
  await Promise.all([victimNs?.delete(), attackerNs?.delete()]);
});

const expired = () => new Date(Date.now() - 60_000).toISOString();

async function importOAuth2(key: string, integration: string, connectionId: string, refreshToken: string, expiresAt: string) {
  const res = await replica.call('POST', '/connections', {
    key,
    body: {
      provider_config_key: integration,
      connection_id: connectionId,
      credentials: { type: 'OAUTH2', access_token: `at.${connectionId}.0`, refresh_token: refreshToken, expires_at: expiresAt },
    },
  });
  expect(res.status).toBe(201);
}

async function session(key: string, endUser: string, integrations: string[]): Promise<string> {
  const res = await replica.call('POST', '/connect/sessions', {
    key,
    body: { end_user: { id: endUser }, allowed_integrations: integrations },
  });
  expect(res.status).toBe(201);
  return res.body.data.token as string;
}

const connectApi = (token: string) =>
  fetch(`${replica.url}/connect/api/session`, { headers: { authorization: `Bearer ${token}` } }).then(async (r) => {
    await r.arrayBuffer();
    return r.status;
  });

/** Calls `step` every `everyMs` until `until`, counting answers by status. */
async function steadily(until: number, everyMs: number, step: (i: number) => Promise<number>): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  for (let i = 0; Date.now() < until; i++) {
    const started = Date.now();
    const status = await step(i).catch(() => 0);
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    await sleep(Math.max(0, everyMs - (Date.now() - started)));
  }
  return statuses;
}

const failures = (statuses: Map<number, number>) => [...statuses].filter(([s]) => s < 200 || s >= 400).reduce((n, [, c]) => n + c, 0);

describe('a hostile provider and a hostile end user', () => {
  it(
    'leave the other tenant and the other end users answered as before',
    async () => {
      // The other tenant: an OAuth 2 connection with an hour left, API keys it imports again and again, an end user.
      await importOAuth2(victim.secretKey, 'crm', 'steady', 'rt.steady.0', new Date(Date.now() + 3_600_000).toISOString());
      const victimSession = await session(victim.secretKey, 'victim-user', ['keys']);
      // The attacking tenant: a connection whose refresh meets the 100 MB answer, five whose tokens expire when issued.
      await importOAuth2(attacker.secretKey, 'huge', 'huge-1', 'rt.huge-1.0', expired());
      for (let i = 0; i < SHORT_LIVED; i++) await importOAuth2(attacker.secretKey, 'instant', `short-${i}`, `rt.short-${i}.0`, expired());
      const hostileSession = await session(attacker.secretKey, 'hostile-user', ['keys']);
      const bystanderSession = await session(attacker.secretKey, 'bystander-user', ['keys']);

      const started = Date.now();
      const until = started + RUN_MS;
      // An end user's pace in the Connect UI: a request every 2 s (a session's budget is 60 a minute).
      const victimConnect = steadily(until, 2000, () => connectApi(victimSession));
      const bystanderLoad = steadily(until, 2000, () => connectApi(bystanderSession));
      const victimLoad = steadily(until, 100, async (i) => {
        switch (i % 3) {
          case 0:
            return (await replica.call('GET', '/connections/steady?provider_config_key=crm', { key: victim.secretKey })).status;
          case 1:
            return (
              await replica.call('POST', '/connections', {
                key: victim.secretKey,
                body: { provider_config_key: 'keys', connection_id: `key-${i % 20}`, credentials: { type: 'API_KEY', apiKey: `k-${i}` } },
              })
            ).status;
          default:
            return (await replica.call('GET', '/connections?limit=10', { key: victim.secretKey })).status;
        }
      });

      // The attack: the 100 MB answer (three times over the run) and 1,500 Connect API requests from one session (twice).
      const hugeAnswers: Array<{ status: number; code?: string }> = [];
      const hostileStatuses = new Map<number, number>();
      const attack = (async () => {
        for (let round = 0; round < 3 && Date.now() < until; round++) {
          const res = await replica.call('GET', '/connections/huge-1?provider_config_key=huge', { key: attacker.secretKey });
          hugeAnswers.push({ status: res.status, code: res.body?.error?.code });
          if (round < 2) {
            let sent = 0;
            await Promise.all(
              Array.from({ length: 50 }, async () => {
                while (sent < 1500) {
                  sent++;
                  const status = await connectApi(hostileSession).catch(() => 0);
                  hostileStatuses.set(status, (hostileStatuses.get(status) ?? 0) + 1);
                }
              }),
            );
          }
          await sleep(Math.min(RUN_MS / 3, Math.max(0, until - Date.now())));
        }
      })();
      const [victimStatuses, victimConnectStatuses, bystanderStatuses] = await Promise.all([
        victimLoad,
        victimConnect,
        bystanderLoad,
        attack,
      ]);
      const ranMs = Date.now() - started;

      // Nobody else saw an error during the attack.
      const seen = (m: Map<number, number>) => Object.fromEntries(m);
      expect({
        victim: failures(victimStatuses),
        victimConnect: failures(victimConnectStatuses),
        bystander: failures(bystanderStatuses),
        answers: [seen(victimStatuses), seen(victimConnectStatuses), seen(bystanderStatuses)],
      }).toEqual({ victim: 0, victimConnect: 0, bystander: 0, answers: expect.anything() });
      expect([...victimStatuses.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(RUN_MS / 200);

      // The attacking end user spent its own budget: 429s for it.
      expect(hostileStatuses.get(429) ?? 0).toBeGreaterThan(0);

      // The 100 MB answers were refused as too large, each cut off long before its end, and nothing was stored.
      expect(hugeAnswers.length).toBeGreaterThan(0);
      for (const a of hugeAnswers) expect(a.code).toBe('provider_answer_too_large');
      expect(hugeAnswers[0]!.status).toBeGreaterThanOrEqual(400);
      expect(hugeAnswers[0]!.status).toBeLessThan(600);
      expect(hugeWritten.length).toBeGreaterThan(0);
      for (const w of hugeWritten) expect(w).toBeLessThan(HUGE_BYTES / 4);
      expect(replica.ctx.connections.getConnection(attackerNs.name, 'huge', 'huge-1')!.credentials.access_token).toBe('at.huge-1.0');

      // Tokens that expire when issued were refreshed at most once per floor per connection.
      const bound = Math.ceil(ranMs / (FLOOR_S * 1000)) + 1;
      for (let i = 0; i < SHORT_LIVED; i++) {
        const n = instantCalls.get(`short-${i}`) ?? 0;
        expect(n).toBeGreaterThanOrEqual(1);
        expect(n).toBeLessThanOrEqual(bound);
      }
    },
    RUN_MS + 180_000,
  );
});
