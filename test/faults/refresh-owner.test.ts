/**
 * The refresh owner under faults, with the controllers as separate processes (`latchkey controller`)
 * and a real oidc-provider that rotates refresh tokens and revokes the grant when a spent one is used
 * again (so two overlapping refreshes of one connection show up as an `invalid_grant` at the peer).
 * The owner A reaches the API server through a TCP proxy the test can cut; B reaches it directly.
 * For each fault (cut, SIGKILL, SIGSTOP) of the owner:
 * - a cut owner stops owning before its Lease can be taken;
 * - the new owner starts no earlier than the Lease's expiry (the last renewal the API server has);
 * - refreshes never overlap (0 `invalid_grant` at the token endpoint) and every grant still refreshes.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { startOidcServer, type OidcTestServer, type TestClient } from '../../dev/peers/oidc-server.js';
import type { LeaseState } from '../../src/k8s/leases.js';
import { importOAuth2 } from '../support/fixtures.js';
import { startReplica, type Replica } from '../support/replica.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import {
  dumpLogs,
  kubeconfigFile,
  lineTime,
  startLatchkeyProcess,
  stopAll,
  type LatchkeyProcess,
} from '../support/faults/latchkey-process.js';
import { becameActive, leaseExpiry, refreshOwnerLease, stoppedOwning, tookOverFrom } from '../support/faults/refresh-owner.js';
import { writeScenario } from '../support/faults/reliability-report.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const client: TestClient = { clientId: 'latchkey-faults-owner', clientSecret: 'faults-owner-client-secret-0123456789' };
const LEASE_SECONDS = 6;
const CONNECTIONS = 3;
const ACCESS_TOKEN_TTL_MS = 8_000;

type Fault = 'cut' | 'sigkill' | 'sigstop';

/** Refresh-token grants the provider refused: with rotation and reuse detection, a refresh that overlapped another. */
const reuseDetections = (oidc: OidcTestServer) => oidc.tokenCalls.filter((c) => c.grantType === 'refresh_token' && c.status === 400).length;

it.each<Fault>(['cut', 'sigkill', 'sigstop'])(
  'owner %s: stops before its Lease can be taken, the next owner waits for the expiry, refreshes never overlap',
  async (fault) => {
    const ns = await createTestNamespace(kc, `faults-owner-${fault}`);
    const oidc = await startOidcServer({ clients: [client], accessTokenTtl: ACCESS_TOKEN_TTL_MS / 1000 });
    const providerName = `oidc-${ns.name}`;
    const proxy = await (async () => {
      const target = new URL(kc.getCurrentCluster()!.server);
      return startTcpProxy(target.hostname, Number(target.port));
    })();
    const processes: LatchkeyProcess[] = [];
    let importer: Replica | undefined;
    const controller = async (identity: string, kubeconfigPath: string) => {
      const p = await startLatchkeyProcess({
        command: 'controller',
        identity,
        namespaces: [ns.name],
        kubeconfigPath,
        env: { LATCHKEY_LEASE_DURATION_SECONDS: String(LEASE_SECONDS) },
      });
      processes.push(p);
      await p.ready();
      return p;
    };
    try {
      await applyProvider(kc, providerName, {
        displayName: 'OIDC',
        authMode: 'OAUTH2',
        authorizationUrl: oidc.authorizationUrl,
        tokenUrl: oidc.tokenUrl,
      });
      await createIntegration(
        kc,
        ns.name,
        'oidc',
        { provider: providerName },
        { clientId: client.clientId, clientSecret: client.clientSecret },
      );
      const a = await controller('owner-a', kubeconfigFile(kc, `https://127.0.0.1:${proxy.port}`));
      // A alone: its share is every connection once its shard is active.
      await eventually(() => becameActive(a)[0], 60_000);

      importer = await startReplica(kc, { namespaces: [ns.name], components: [] });
      const names: string[] = [];
      for (let i = 0; i < CONNECTIONS; i++) {
        const { conn } = await importOAuth2(importer.ctx, oidc, client, ns.name, 'oidc', providerName, { expiresInMs: 4_000 });
        names.push(conn.resource.metadata.name);
      }
      // The owner refreshes: each connection at least once.
      await eventually(() => oidc.refreshCalls() >= CONNECTIONS, 90_000, 200);
      // The peer counts the call before A has written the result: wait for A's line.
      await eventually(() => a.logged('token refreshed').length > 0, 60_000);
      // B joins now; it stays inactive for one lease duration, then owns its share of the ring.
      const b = await controller('owner-b', kubeconfigFile(kc));
      await eventually(() => becameActive(b)[0], 60_000);

      const faultAt = Date.now();
      if (fault === 'cut') {
        proxy.refuse(true);
        proxy.cut();
      } else if (fault === 'sigkill') {
        await a.kill();
      } else {
        a.pause();
      }
      // Watch A's shard Lease until B's ring drops A: the last state seen is A's final renewal.
      let last: LeaseState | undefined;
      await eventually(
        async () => {
          const lease = await refreshOwnerLease(kc, ns.name, 'owner-a');
          if (lease) last = lease;
          return tookOverFrom(b, 'owner-a').length > 0;
        },
        120_000,
        100,
      );
      expect(last).toBeDefined();
      const expiry = leaseExpiry(last!);
      const tookOver = lineTime(tookOverFrom(b, 'owner-a')[0]!);
      // The next owner starts no earlier than the Lease's expiry.
      expect(tookOver).toBeGreaterThanOrEqual(expiry);
      if (fault === 'cut') {
        // Cut from the API server, A stops owning before anyone could take its Lease, and refreshes nothing after.
        const stopped = await eventually(() => stoppedOwning(a).find((l) => lineTime(l) >= faultAt), 60_000);
        expect(lineTime(stopped)).toBeLessThan(expiry);
        expect(a.logged('token refreshed').filter((l) => lineTime(l) > lineTime(stopped))).toEqual([]);
      }
      if (fault === 'sigstop') {
        // Resumed, the old owner finds the Lease taken and stops owning. A refresh it had in flight when
        // paused may still finish (it holds that connection's refresh lock): the peer's counts below show
        // that nothing overlapped (0 reuse detections, no grant lost).
        a.resume();
        await eventually(() => stoppedOwning(a).find((l) => lineTime(l) >= faultAt), 60_000);
      }
      // Refreshes go on under the new owner: every connection refreshes again, or its refresh failed for
      // good (counted below as a lost grant).
      const refreshedSince = async (name: string, since: number) => {
        const secret = await core.readNamespacedSecret({ namespace: ns.name, name });
        const creds = JSON.parse(Buffer.from(secret.data!['credentials.json']!, 'base64').toString()) as { expires_at: string };
        return Date.parse(creds.expires_at) >= since;
      };
      const failedForGood = (name: string) =>
        b.logged('token refresh failed for good; connection needs re-authorization').some((l) => JSON.stringify(l).includes(name));
      await eventually(
        async () => {
          for (const name of names)
            if (!failedForGood(name) && !(await refreshedSince(name, tookOver + ACCESS_TOKEN_TTL_MS - 1_000))) return false;
          return true;
        },
        120_000,
        500,
      );
      const lost = names.filter(failedForGood);
      // Refreshed after the take-over: by the new owner, or (SIGSTOP) by a refresh the old owner had in
      // flight when paused and finished on resume, under that connection's refresh lock.
      // A line is logged after its Secret write: wait for the lines, not only the Secrets.
      const refreshedAfter = () =>
        b.logged('token refreshed').length + a.logged('token refreshed').filter((l) => lineTime(l) >= tookOver).length;
      await eventually(() => refreshedAfter() >= CONNECTIONS - lost.length, 30_000);
      const spentNotWritten = a.logged('refreshed credentials not written; kept for the next attempt').length;
      if (fault === 'cut') {
        // Known limit (docs/reliability.md): a cut that lands after the provider rotated the refresh token
        // and before the Secret write strands the new tokens in the cut replica; the next owner's refresh
        // with the stored token is a reuse, and the provider revokes the grant. Nothing else loses one.
        expect(lost.length).toBeLessThanOrEqual(spentNotWritten);
        expect(reuseDetections(oidc)).toBe(lost.length);
      } else {
        expect(lost).toEqual([]);
        expect(reuseDetections(oidc)).toBe(0);
      }
      writeScenario({
        scenario: `refresh-owner-${fault}`,
        title: `Refresh owner: ${fault === 'cut' ? 'cut from the API server' : fault === 'sigkill' ? 'SIGKILL' : 'SIGSTOP, then SIGCONT'}`,
        faults: { [fault]: 1 },
        survived: true,
        counts: {
          refreshCallsAtProvider: oidc.refreshCalls(),
          reuseDetections: reuseDetections(oidc),
          tokensSpentNotWrittenByA: spentNotWritten,
          refreshesByA: a.logged('token refreshed').length,
          refreshesByB: b.logged('token refreshed').length,
          connections: CONNECTIONS,
        },
        grantsLost: lost.length,
        takeoverMs: tookOver - faultAt,
        notes: [`Lease ${LEASE_SECONDS} s; the new owner started ${tookOver - expiry} ms after the old owner's Lease expired`],
      });
    } finally {
      await stopAll(processes);
      dumpLogs(`refresh-owner-${fault}`, processes);
      await importer?.stop();
      await proxy.close();
      await oidc.close();
      await deleteProvider(kc, providerName);
      await ns.delete();
    }
  },
  400_000,
);
