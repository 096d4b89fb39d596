/**
 * Grants under random faults (issue #17, scenario 4). Three controller replicas, each a separate
 * process (`latchkey controller`), refresh CONNECTIONS grants at a real oidc-provider (refresh-token
 * rotation; a spent refresh token used again revokes the grant) until the provider has rotated
 * REFRESHES refresh tokens, while a seeded fault injector:
 * - fails Secret writes (PUT) at each replica's API-server proxy: 500 before the write, 409 before
 *   the write, 500 after the API server applied it (the answer lost), and now and then a burst in
 *   which every Secret write of one replica fails for a few seconds;
 * - delays token requests at a proxy in front of the token endpoint past the refresh owner's Lease
 *   (the shard Lease), and some past the token-call timeout (the refresher gives up; the request
 *   never reaches the provider);
 * - SIGKILLs a random replica and restarts it with the same identity (a container restart in its pod).
 * Then the faults stop, and every connection must refresh again with the refresh token it has stored:
 * 0 grants lost, 0 reuse detections, both counted at the provider.
 *
 * The one window no client can close: a replica killed after the provider rotated a refresh token and
 * before a Secret holds it strands the new token (known limit, docs/reliability.md). The injector kills
 * outside that window, and says so: it holds new token requests at the token proxy, waits until no
 * token request is at the provider and no Secret holds a refresh token the provider already rotated
 * (from oidc-provider's own `grant.success` events), then kills, and drops the victim's held requests.
 * Everything else (write failures, delays, ring changes, locks left by the dead) is random.
 *
 * REFRESHES defaults to a count that fits the CI suite; LATCHKEY_FAULTS_REFRESHES=1000 is the
 * issue's figure (docs/reliability.md says which run the table shows). LATCHKEY_FAULTS_SEED replays
 * the injector's choices (the timing of a run still varies).
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider } from '../../dev/fixtures.js';
import type { TestClient } from '../../dev/peers/oidc-server.js';
import { refresherFor } from '../../src/auth/refresh/shared-refresher.js';
import { RefreshError } from '../../src/auth/refresh/token-refresher.js';
import { importOAuth2 } from '../support/fixtures.js';
import { startOAuthBed } from '../support/oauth-bed.js';
import { startReplica, type Replica } from '../support/replica.js';
import { seededRandom, startHttpFaultProxy, type HttpFaultProxy, type ProxiedRequest } from '../support/faults/http-fault-proxy.js';
import { dumpLogs, kubeconfigFile, startLatchkeyProcess, stopAll, type LatchkeyProcess } from '../support/faults/latchkey-process.js';
import { localPortsOf } from '../support/faults/process-sockets.js';
import { writeScenario } from '../support/faults/reliability-report.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const client: TestClient = { clientId: 'latchkey-faults-grants', clientSecret: 'faults-grants-client-secret-0123456789' };
const REFRESHES = Number(process.env.LATCHKEY_FAULTS_REFRESHES ?? 100);
const CONNECTIONS = Number(process.env.LATCHKEY_FAULTS_CONNECTIONS ?? (REFRESHES >= 1000 ? 50 : 20));
const SEED = Number(process.env.LATCHKEY_FAULTS_SEED ?? Date.now() % 2 ** 31);
const REPLICAS = ['grants-a', 'grants-b', 'grants-c'];
/** The shard Lease: who owns a connection's refreshes. */
const LEASE_SECONDS = 5;
/** Access tokens live 10 s and are renewed half-way (LATCHKEY_REFRESH_MARGIN_RATIO 0.5). */
const ACCESS_TOKEN_TTL_SECONDS = 10;
/** The refresher's token-call timeout (TokenRefresherDeps.tokenTimeoutSeconds default). */
const TOKEN_TIMEOUT_MS = 10_000;
/**
 * Token requests delayed past the Lease are passed on 0.5-1.5 s after it lapsed; none is passed on
 * after waiting longer than TOKEN_MAX_WAIT_MS at the proxy (delay and a kill's hold together), so the
 * provider, slow as it is on a busy machine, answers before the refresher gives up. An answer that
 * comes after the provider rotated and after the refresher gave up is the stranding window (header).
 */
const pastLeaseDelayMs = (random: () => number) => LEASE_SECONDS * 1000 + 500 + Math.floor(random() * 1_000);
const TOKEN_MAX_WAIT_MS = TOKEN_TIMEOUT_MS - 3_000;
/** A refresh phase on a busy 2-core machine: about a refresh a second, with room. */
const REFRESH_PHASE_MS = Math.max(600_000, REFRESHES * 3_000);

/** The injector's random schedule (when the next fault comes), not a wait for a result. */
const injectorPause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the injector did, by kind. */
const faults = {
  secretWrite500: 0,
  secretWrite409: 0,
  secretWriteAppliedAnswerLost: 0,
  secretWriteBursts: 0,
  tokenDelayedPastLease: 0,
  tokenDelayedPastCallTimeout: 0,
  sigkill: 0,
};

it(
  `${REFRESHES} refreshes under random Secret-write failures, slow token answers and killed replicas: no grant lost, no reuse`,
  async () => {
    const bed = await startOAuthBed(kc, {
      namespace: 'faults-grants',
      client,
      integration: 'oidc',
      accessTokenTtl: ACCESS_TOKEN_TTL_SECONDS,
    });
    const { ns, oidc } = bed;
    const random = seededRandom(SEED);
    // Refresh tokens the provider has rotated (spent), from its own events: the peer's count.
    const spent = new Set<string>();
    oidc.provider.on('grant.success', (ctx: { oidc?: { params?: Record<string, unknown> } }) => {
      const params = ctx.oidc?.params;
      if (params?.grant_type === 'refresh_token') spent.add(String(params.refresh_token));
    });
    const reuseDetections = () => oidc.tokenCalls.filter((c) => c.grantType === 'refresh_token' && c.status === 400).length;

    let injecting = true;
    const tokenProxy = await startHttpFaultProxy(oidc.issuer);
    tokenProxy.maxWaitMs = TOKEN_MAX_WAIT_MS;
    tokenProxy.decide = () => {
      if (!injecting) return {};
      const x = random();
      if (x < 0.02) {
        faults.tokenDelayedPastCallTimeout++;
        return { delayMs: TOKEN_TIMEOUT_MS + 1_500 };
      }
      if (x < 0.12) {
        faults.tokenDelayedPastLease++;
        return { delayMs: pastLeaseDelayMs(random) };
      }
      return {};
    };
    // Through the proxy, the token endpoint is slow or silent; the Provider's other URLs stay direct.
    await applyProvider(kc, bed.providerName, {
      displayName: 'Test OIDC',
      authMode: 'OAUTH2',
      authorizationUrl: oidc.authorizationUrl,
      tokenUrl: `${tokenProxy.url}/token`,
    });

    const apiServer = kc.getCurrentCluster()!.server;
    const secretPut = (r: ProxiedRequest) => r.method === 'PUT' && r.path.startsWith(`/api/v1/namespaces/${ns.name}/secrets/`);
    const apiProxies = new Map<string, { proxy: HttpFaultProxy; burstUntil: number; kubeconfig: string }>();
    for (const identity of REPLICAS) {
      const proxy = await startHttpFaultProxy(apiServer);
      const entry = { proxy, burstUntil: 0, kubeconfig: kubeconfigFile(kc, proxy.url) };
      proxy.decide = (r) => {
        if (!injecting || !secretPut(r)) return {};
        if (r.at < entry.burstUntil) {
          faults.secretWrite500++;
          return { status: 500 };
        }
        const x = random();
        if (x < 0.12) {
          faults.secretWrite500++;
          return { status: 500 };
        }
        if (x < 0.2) {
          faults.secretWrite409++;
          return { status: 409 };
        }
        if (x < 0.26) {
          faults.secretWriteAppliedAnswerLost++;
          return { replaceStatus: 500 };
        }
        return {};
      };
      apiProxies.set(identity, entry);
    }

    const processes: LatchkeyProcess[] = [];
    const live = new Map<string, LatchkeyProcess>();
    const startController = async (identity: string) => {
      const p = await startLatchkeyProcess({
        command: 'controller',
        identity,
        namespaces: [ns.name],
        kubeconfigPath: apiProxies.get(identity)!.kubeconfig,
        logLevel: 'info',
        env: { LATCHKEY_LEASE_DURATION_SECONDS: String(LEASE_SECONDS), LATCHKEY_REFRESH_MARGIN_RATIO: '0.5' },
      });
      processes.push(p);
      live.set(identity, p);
      // Generous: a restart on a machine this busy takes a minute or two to sync its caches.
      await p.ready(240_000);
      return p;
    };
    const storedRefreshTokens = async () => {
      const list = await core.listNamespacedSecret({ namespace: ns.name, fieldSelector: 'type=latchkey.dev/connection-credentials' });
      return new Map(
        list.items.map((s) => {
          const creds = JSON.parse(Buffer.from(s.data!['credentials.json']!, 'base64').toString()) as { refresh_token?: string };
          return [s.metadata!.name!, creds.refresh_token ?? ''];
        }),
      );
    };
    /** A rotated refresh token whose successor no Secret holds yet: the successor is only in a replica's memory. */
    const unwrittenRotations = async () => [...(await storedRefreshTokens()).values()].filter((t) => spent.has(t)).length;

    let importer: Replica | undefined;
    const killWaitsMs: number[] = [];
    try {
      for (const identity of REPLICAS) await startController(identity);
      importer = await startReplica(kc, { namespaces: [ns.name], components: [] });
      for (let i = 0; i < CONNECTIONS; i++) {
        // First expiries spread over one lifetime, so refreshes do not come in waves.
        await importOAuth2(importer.ctx.store, oidc, client, ns.name, 'oidc', bed.providerName, {
          expiresInMs: 3_000 + Math.floor(random() * ACCESS_TOKEN_TTL_SECONDS * 1000),
        });
      }

      // The killer: every 6-14 s, one replica, outside the stranding window (see the header), restarted 0-2 s later.
      let killing = true;
      const killer = (async () => {
        while (killing) {
          await injectorPause(6_000 + random() * 8_000);
          if (!killing) return;
          const identity = REPLICAS[Math.floor(random() * REPLICAS.length)]!;
          const victim = live.get(identity)!;
          const release = tokenProxy.hold();
          const waitStarted = Date.now();
          try {
            await eventually(async () => tokenProxy.inFlight === 0 && (await unwrittenRotations()) === 0, 60_000, 50);
            const ports = localPortsOf(victim.pid);
            await victim.kill();
            tokenProxy.dropFrom(ports);
            faults.sigkill++;
          } finally {
            release();
          }
          killWaitsMs.push(Date.now() - waitStarted);
          await injectorPause(random() * 2_000);
          await startController(identity);
        }
      })();
      // Now and then one replica's Secret writes all fail for 3-6 s (longer than its write retries).
      const bursts = setInterval(() => {
        if (!injecting || random() > 0.3) return;
        const entry = apiProxies.get(REPLICAS[Math.floor(random() * REPLICAS.length)]!)!;
        entry.burstUntil = Date.now() + 3_000 + random() * 3_000;
        faults.secretWriteBursts++;
      }, 5_000);

      try {
        await eventually(() => spent.size >= REFRESHES || reuseDetections() > 0, REFRESH_PHASE_MS, 500);
      } finally {
        killing = false;
        clearInterval(bursts);
        await killer;
        injecting = false;
      }
      const rotationsUnderFaults = spent.size;

      // Faults off: every grant must still refresh with the token it has stored. Each connection is
      // refreshed once more, forced, through the product's refresher in this process (the controllers
      // keep running, so one of theirs may come first: that counts too); a refused grant is lost.
      const before = await storedRefreshTokens();
      expect(before.size).toBe(CONNECTIONS);
      const refresher = refresherFor(importer.ctx);
      const lost: string[] = [];
      for (const [name, token] of before) {
        const { integration, connectionId } = importer.ctx.store.getConnectionByName(ns.name, name)!.resource.spec;
        const outcome = await eventually(
          async () => {
            try {
              await refresher.ensureFresh(ns.name, integration, connectionId, { reason: 'fetch', force: true });
            } catch (err) {
              if (err instanceof RefreshError && err.permanent) return 'refused';
              throw err;
            }
            return spent.has(token) && (await storedRefreshTokens()).get(name) !== token ? 'refreshed' : undefined;
          },
          120_000,
          1_000,
        ).catch(() => 'not refreshed within 120 s');
        if (outcome !== 'refreshed') lost.push(name);
      }

      const lines = (msg: string) => processes.reduce((n, p) => n + p.logged(msg).length, 0);
      // Every rotation at the provider is recorded as a refresh by the replica that made it, a write
      // applied although its answer was lost included; only a replica killed between its Secret write
      // and its log line leaves one out. The line comes after the write: wait for it, bounded.
      const rotations = spent.size;
      const recorded = () => lines('token refreshed');
      await eventually(() => recorded() >= rotations - faults.sigkill, 60_000, 200).catch(() => undefined);
      const injectedAt = (applied: boolean) =>
        [...apiProxies.values()].reduce((n, e) => n + e.proxy.injected.filter((i) => i.applied === applied).length, 0);
      writeScenario({
        scenario: 'grants-under-faults',
        title: `Grants under random faults: ${rotationsUnderFaults} refreshes, ${CONNECTIONS} connections, ${REPLICAS.length} controllers`,
        faults: { ...faults },
        survived: lost.length === 0 && reuseDetections() === 0,
        counts: {
          rotationsAtProvider: rotationsUnderFaults,
          refreshCallsAtProvider: oidc.refreshCalls(),
          reuseDetections: reuseDetections(),
          tokenRequestsNeverPassedOn: tokenProxy.dropped.length,
          secretWritesFailedAtApiProxies: injectedAt(false),
          secretWritesAppliedAnswerLost: injectedAt(true),
          tokenRefreshedLines: recorded(),
          rotationsAtProviderInAll: rotations,
          keptForNextAttemptLines: lines('refreshed credentials not written; kept for the next attempt'),
          connections: CONNECTIONS,
        },
        grantsLost: lost.length,
        notes: [
          `seed ${SEED}; shard Lease ${LEASE_SECONDS} s, access tokens ${ACCESS_TOKEN_TTL_SECONDS} s; token delays past the Lease ${LEASE_SECONDS + 0.5}-${LEASE_SECONDS + 1.5} s, past the call timeout ${(TOKEN_TIMEOUT_MS + 1500) / 1000} s; no token request passed on after ${TOKEN_MAX_WAIT_MS / 1000} s at the proxy`,
          `kills wait for the stranding window to close (no token call at the provider, no Secret holding a rotated token): waits ${killWaitsMs.length ? `${Math.min(...killWaitsMs)}-${Math.max(...killWaitsMs)} ms` : 'none'}`,
        ],
      });
      expect(reuseDetections()).toBe(0);
      expect(lost).toEqual([]);
      expect(rotationsUnderFaults).toBeGreaterThanOrEqual(REFRESHES);
      expect(rotations - recorded()).toBeLessThanOrEqual(faults.sigkill);
      // One run of the merged suite logged 171 refreshes for 170 rotations; the extra line is not explained yet
      // (open in issue #17). Bounded by the writes applied whose answer was lost, the one fault that makes a retry
      // meet its own write; the grants themselves (reuse, lost) are asserted above without slack.
      expect(recorded()).toBeLessThanOrEqual(rotations + injectedAt(true));
      expect(faults.sigkill).toBeGreaterThan(0);
    } finally {
      injecting = false;
      await stopAll(processes);
      dumpLogs('grants-under-faults', processes);
      await importer?.stop();
      await tokenProxy.close();
      for (const { proxy } of apiProxies.values()) await proxy.close();
      await bed.close();
    }
  },
  REFRESH_PHASE_MS + 900_000,
);
