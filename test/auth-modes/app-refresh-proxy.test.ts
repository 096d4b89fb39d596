/**
 * APP and CUSTOM after the connection exists: the controller's schedule (not a fetch) re-mints an
 * installation token before it ends and renews a CUSTOM connection's user token with its refresh
 * token; and the proxy sends the installation token as `Authorization: Bearer` to the upstream.
 * Against the loopback fake GitHub (test/support/servers/github-app-server.ts says what it verifies),
 * with short token lifetimes from the fake instead of GitHub's hour (installation) and 8 hours (user).
 * The server replica (Connect bed) serves imports, installs and the proxy; a second replica runs the
 * controller alone, as a follower; nothing fetches the connections while the refresh tests wait.
 */
import { Leases } from '../../src/k8s/leases.js';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { testConfig } from '../support/config.js';
import { startGitHubAppBed, type GitHubAppBed } from '../support/github-app-bed.js';
import { proxyClient } from '../support/api-clients.js';
import { startReplica, type Replica } from '../support/replica.js';

/** Above the default refresh margin (300 s) by 10 s: each token is due 10 s after it is minted. */
const SHORT_LIFETIME_SECONDS = 310;

let t: GitHubAppBed;
let controller: Replica;

beforeAll(async () => {
  const kc = testKubeConfig();
  t = await startGitHubAppBed('app-refresh');
  const namespace = t.bed.ns.name;
  // The controller runs as a follower, as most replicas do: another identity holds the leader Lease, so
  // this replica refreshes its share of the connections (all of them: it is the only shard member) and
  // leaves the Providers' and Integrations' status to the leader, which this suite does not test.
  const config = testConfig([namespace], { leaderElection: true });
  const held = await new Leases(kc).tryAcquire(config.leaseNamespace, config.leaseName, 'leader-elsewhere', 3600);
  expect(held.acquired).toBe(true);
  controller = await startReplica(kc, { namespaces: [namespace], components: ['controller'], config });
  await eventually(() => controller.ctx.catalog.getIntegration(namespace, 'github-user'));
}, 120_000);

afterAll(async () => {
  await controller?.stop();
  await t?.close();
});

const stored = (integration: string, connectionId: string) =>
  controller.ctx.connections.getConnection(t.bed.ns.name, integration, connectionId)?.credentials as Record<string, any> | undefined;

/** What a chain follows: the installation token (APP) or the user token (CUSTOM), with the expiry stored beside it. */
type Pick = (c: Record<string, any>) => { value: string | undefined; expiresAt: number };
const installationToken: Pick = (c) => ({ value: c.access_token, expiresAt: Date.parse(c.expires_at) });
const userToken: Pick = (c) => ({ value: c.user?.access_token, expiresAt: Date.parse(c.user?.expires_at) });

/** Watches the controller's view of one connection until `count` distinct tokens were stored; returns them in order. */
async function chainOf(integration: string, connectionId: string, pick: Pick, count: number) {
  const chain: Array<{ value: string; expiresAt: number }> = [];
  await eventually(
    () => {
      const c = stored(integration, connectionId);
      const next = c ? pick(c) : undefined;
      if (next?.value && next.value !== chain.at(-1)?.value) chain.push({ value: next.value, expiresAt: next.expiresAt });
      return chain.length >= count;
    },
    90_000,
    100,
  );
  return chain;
}

const proxyGet = (integration: string, connectionId: string, path: string) =>
  proxyClient({ url: t.bed.latchkey.url, env: t.bed.env }, integration)(connectionId, path);

describe('APP: scheduled re-mint and proxy', () => {
  it('the controller re-mints an installation token before it ends, again and again, with no fetch', async () => {
    t.gh.tokenLifetimeSeconds = SHORT_LIFETIME_SECONDS;
    try {
      const installation = t.gh.addInstallation(t.installApp.id, 'scheduled-org', new Date(Date.now() - 86_400_000));
      const imported = await t.importInstallation('scheduled', installation.id);
      expect(imported.status).toBe(201);
      const minted = t.gh.installationTokens.length;

      const chain = await chainOf('github', 'scheduled', installationToken, 3);
      // Two re-mints by the controller, each at the fake before the token it replaced had ended.
      const mints = t.gh.installationTokens.slice(minted).filter((m) => m.installationId === installation.id);
      expect(mints.length).toBeGreaterThanOrEqual(2);
      for (let i = 1; i < 3; i++) {
        const mint = t.gh.installationTokens.find((m) => m.token === chain[i]!.value)!;
        const mintedAt = mint.expiresAt - SHORT_LIFETIME_SECONDS * 1000;
        expect(mintedAt).toBeLessThan(chain[i - 1]!.expiresAt);
      }
      expect(t.gh.rejections).toEqual([]);
      // The latest is one the fake accepts.
      const latest = stored('github', 'scheduled')!.access_token as string;
      const repos = await fetch(`${t.gh.origin}/installation/repositories`, { headers: { authorization: `Bearer ${latest}` } });
      expect(repos.status).toBe(200);
    } finally {
      t.gh.tokenLifetimeSeconds = 3600;
    }
  });

  it('a proxied request reaches the upstream with Authorization: Bearer <the stored installation token>', async () => {
    const installation = t.gh.addInstallation(t.installApp.id, 'proxied-org', new Date(Date.now() - 86_400_000));
    const imported = await t.importInstallation('proxied', installation.id);
    expect(imported.status).toBe(201);
    const token = (imported.body.credentials as Record<string, string>).access_token!;
    const mintsOf = () => t.gh.installationTokens.filter((m) => m.installationId === installation.id).length;
    const minted = mintsOf();
    t.gh.apiCalls.length = 0;

    const res = await proxyGet('github', 'proxied', '/installation/repositories');
    expect(res.status).toBe(200);
    expect(res.body.installation_id).toBe(installation.id);
    expect(t.gh.apiCalls).toEqual([{ path: '/installation/repositories', authorization: `Bearer ${token}` }]);
    // An hour-long token is not renewed for the call.
    expect(mintsOf()).toBe(minted);
  });
});

describe('CUSTOM: scheduled user-token renewal and proxy', () => {
  it('the controller renews the user token with its refresh token before it ends, with no fetch', async () => {
    t.gh.userTokenLifetimeSeconds = SHORT_LIFETIME_SECONDS;
    let connectionId: string;
    try {
      connectionId = await t.installConnection('github-user', 'user-scheduled', 'mona-scheduled');
      const chain = await chainOf('github-user', connectionId, userToken, 3);
      for (let i = 1; i < 3; i++) {
        const issued = t.gh.userTokens.find((u) => u.token === chain[i]!.value)!;
        const issuedAt = issued.expiresAt - SHORT_LIFETIME_SECONDS * 1000;
        expect(issuedAt).toBeLessThan(chain[i - 1]!.expiresAt);
      }
      // Each renewal used (and rotated) the refresh token: the latest user token works at the fake.
      const creds = stored('github-user', connectionId)!;
      expect(creds.user.refresh_token).toMatch(/^ghr_/);
      const me = await fetch(`${t.gh.origin}/user`, { headers: { authorization: `Bearer ${creds.user.access_token}` } });
      expect(await me.json()).toEqual({ login: 'mona-scheduled' });
      // The installation token was minted again with it and stays the one the connection is due by at the latest.
      expect(Date.parse(creds.expires_at)).toBeLessThanOrEqual(Date.parse(creds.installation_expires_at));
    } finally {
      t.gh.userTokenLifetimeSeconds = 8 * 3600;
    }
  });

  it('a proxied request carries the installation token as Bearer (docs/auth-modes.md: the user token is for the application)', async () => {
    const connectionId = await t.installConnection('github-user', 'user-proxied', 'mona-proxied');
    const creds = stored('github-user', connectionId)!;
    t.gh.apiCalls.length = 0;

    const res = await proxyGet('github-user', connectionId, '/installation/repositories');
    expect(res.status).toBe(200);
    expect(t.gh.apiCalls).toEqual([{ path: '/installation/repositories', authorization: `Bearer ${creds.access_token}` }]);
    expect(t.gh.apiCalls[0]!.authorization).not.toContain(creds.user.access_token);
  });
});
