/**
 * The egress guard's `ca`: connections through the guard trust that CA instead of the system's (what the
 * provider simulators rely on: their HTTPS certificate is signed by a CA made at test start).
 */
import { createGuardedFetch, type GuardedFetch } from '../../src/egress/fetch.js';
import { EgressGuard } from '../../src/egress/guard.js';
import { startSimulators, type SimulatorHost } from '../support/simulators/framework.js';
import { slack } from '../support/simulators/slack.js';

let host: SimulatorHost;
const opened: GuardedFetch[] = [];

beforeAll(async () => {
  host = await startSimulators([slack()]);
});

afterAll(async () => {
  for (const f of opened) await f.close();
  await host?.close();
});

function guardedFetch(guard: EgressGuard): typeof fetch {
  const f = createGuardedFetch(guard);
  opened.push(f);
  return f.fetch;
}

describe('EgressGuard ca', () => {
  it('trusts a server whose certificate the given CA signed', async () => {
    const res = await guardedFetch(host.egressGuard())('https://slack.com/api/conversations.list');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: false, error: 'not_authed' });
  });

  it("without it, the same server's certificate is refused", async () => {
    const same = host.egressGuard();
    const withoutCa = new EgressGuard({ allow: [`${host.address}/32`], resolve: async () => [{ address: host.address, family: 4 }] });
    expect(same.ca).toBe(host.ca);
    const err = (await guardedFetch(withoutCa)('https://slack.com/api/conversations.list').catch((e: unknown) => e)) as Error & {
      cause?: { code?: string };
    };
    // A TLS verification failure (the test CA is not among the system's), not a refusal or a connection error.
    expect(err.cause?.code).toMatch(/CERT|VERIFY|SIGNATURE|ISSUER/);
  });
});
