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
 * (from oidc-provider's own `grant.success` events), then kills, and drops the victim's held requests;
 * a kill whose window does not close within KILL_WAIT_MS is skipped (and counted).
 * Everything else (write failures, delays, ring changes, locks left by the dead) is random.
 *
 * Then the accounting: with no more rotations possible and the replicas stopped, every 'token refreshed'
 * line (the replicas' and the end check's) is one rotation at the provider, and only a few rotations,
 * each for a reason the test counts, go without one (see the checks at the end).
 *
 * REFRESHES defaults to a count that fits the CI suite; LATCHKEY_FAULTS_REFRESHES=1000 is the
 * issue's figure (docs/reliability.md says which run the table shows). LATCHKEY_FAULTS_SEED replays
 * the injector's choices (the timing of a run still varies).
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider } from '../../dev/fixtures.js';
import type { TestClient } from '../../dev/peers/oidc-server.js';
import { refresherFor } from '../../src/connections/shared-refresher.js';
import { RefreshError } from '../../src/auth/refresh/token-refresher.js';
import { importOAuth2 } from '../support/fixtures.js';
import { captureLogs } from '../support/log-capture.js';
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
/**
 * The refresh phase's bound on a busy 2-core machine. The merged suite managed about 0.3 refreshes a
 * second, so a bound of 3 s a refresh was too tight for 1,000: 5 s a refresh, at least 10 minutes.
 */
const REFRESH_PHASE_MS = Math.max(600_000, REFRESHES * 5_000);
/** How long a kill waits for the stranding window to close before it is skipped (and counted as skipped). */
const KILL_WAIT_MS = 60_000;

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

/** A pino line of a replica in this process (the end check's refresher), parsed. */
const messageOf = (line: string) => (JSON.parse(line) as { msg?: string }).msg;

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
    // The importer's refresher does the end check's forced refreshes: its lines count with the replicas'.
    const importerLogs = captureLogs();
    const killWaitsMs: number[] = [];
    let killsSkipped = 0;
    const startedAt = Date.now();
    try {
      for (const identity of REPLICAS) await startController(identity);
      importer = await startReplica(kc, { namespaces: [ns.name], components: [], logger: importerLogs.logger });
      for (let i = 0; i < CONNECTIONS; i++) {
        // First expiries spread over one lifetime, so refreshes do not come in waves.
        await importOAuth2(importer.ctx, oidc, client, ns.name, 'oidc', bed.providerName, {
          expiresInMs: 3_000 + Math.floor(random() * ACCESS_TOKEN_TTL_SECONDS * 1000),
        });
      }

      const phaseStarted = Date.now();
      let refreshPhaseMs = 0;
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
          let killed = false;
          try {
            const closed = await eventually(
              async () => tokenProxy.inFlight === 0 && (await unwrittenRotations()) === 0,
              KILL_WAIT_MS,
              50,
            ).catch(() => false);
            if (closed) {
              const ports = localPortsOf(victim.pid);
              await victim.kill();
              tokenProxy.dropFrom(ports);
              faults.sigkill++;
              killed = true;
            } else killsSkipped++;
          } finally {
            release();
          }
          if (!killed) continue;
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
        refreshPhaseMs = Date.now() - phaseStarted;
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
        const { integration, connectionId } = importer.ctx.connections.getConnectionByName(ns.name, name)!.resource.spec;
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

      const endCheckRefreshes = importerLogs.lines.filter((l) => messageOf(l) === 'token refreshed').length;

      // The accounting below compares two counts, rotations at the provider and 'token refreshed' lines,
      // so both are taken when neither can change any more: the token endpoint is closed (503, no more
      // rotations), every rotation it answered is in a Secret, and the replicas are stopped (SIGTERM: a
      // refresh in flight finishes; their stdout is read to the end). Counted as before, while the
      // controllers still refreshed (the rotations first, the lines after waiting for them), the comparison
      // was not exact: the end check's own refreshes (logged in this process) were in the rotations and not
      // in the lines, and the wait let the controllers' later refreshes, not in the rotations, fill that gap
      // and overshoot it (one run of the merged suite: 171 lines for 170 rotations). No refresh was logged twice.
      tokenProxy.decide = () => ({ status: 503 });
      await eventually(async () => tokenProxy.inFlight === 0 && (await unwrittenRotations()) === 0, 60_000, 100).catch(() => undefined);
      const lines = (msg: string) =>
        processes.reduce((n, p) => n + p.logged(msg).length, 0) + importerLogs.lines.filter((l) => messageOf(l) === msg).length;
      const recordedNow = () => lines('token refreshed');
      const supersededNow = () => lines('credentials changed during the refresh; the newer ones are kept');
      const droppedNow = () => lines('refreshed credentials not written; dropped');
      // A line follows its Secret write (a write applied although its answer was lost is retried first, kept
      // credentials are written a few seconds later): wait for the lines the bound below expects, then stop.
      await eventually(() => recordedNow() >= spent.size - faults.sigkill - supersededNow() - droppedNow(), 30_000, 200).catch(
        () => undefined,
      );
      await stopAll(processes);
      const rotations = spent.size;
      const recorded = recordedNow();
      const kept = lines('refreshed credentials not written; kept for the next attempt');
      const superseded = supersededNow();
      const dropped = droppedNow();
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
          rotationsAtProviderInAll: rotations,
          tokenRefreshedLines: recorded,
          endCheckRefreshes,
          keptForNextAttemptLines: kept,
          supersededLines: superseded,
          keptDroppedLines: dropped,
          killsSkipped,
          connections: CONNECTIONS,
        },
        grantsLost: lost.length,
        notes: [
          `seed ${SEED}; shard Lease ${LEASE_SECONDS} s, access tokens ${ACCESS_TOKEN_TTL_SECONDS} s; token delays past the Lease ${LEASE_SECONDS + 0.5}-${LEASE_SECONDS + 1.5} s, past the call timeout ${(TOKEN_TIMEOUT_MS + 1500) / 1000} s; no token request passed on after ${TOKEN_MAX_WAIT_MS / 1000} s at the proxy`,
          `kills wait for the stranding window to close (no token call at the provider, no Secret holding a rotated token): waits ${killWaitsMs.length ? `${Math.min(...killWaitsMs)}-${Math.max(...killWaitsMs)} ms` : 'none'}${killsSkipped ? `; ${killsSkipped} kills skipped (not closed within ${KILL_WAIT_MS / 1000} s)` : ''}`,
          `refresh phase ${Math.round(refreshPhaseMs / 1000)} s, whole scenario ${Math.round((Date.now() - startedAt) / 1000)} s; tokenRefreshedLines counts the replicas' lines and the end check's (${endCheckRefreshes} of its ${CONNECTIONS} forced refreshes rotated in this process; the others found a replica's refresh first)`,
        ],
      });
      expect(reuseDetections()).toBe(0);
      expect(lost).toEqual([]);
      expect(rotationsUnderFaults).toBeGreaterThanOrEqual(REFRESHES);
      // Counted at rest, the lines are exact: a 'token refreshed' line is one rotation whose credentials
      // the refresher that received them stored (its own write, or its earlier write applied although the
      // answer was lost), logged once; so never more lines than rotations.
      expect(recorded).toBeLessThanOrEqual(rotations);
      // A rotation goes unrecorded only if the replica holding it was killed after its Secret write was
      // applied and before it recorded it (about one per kill at most: the killer waits until every rotation
      // is in a Secret; the victim may not have read the write's answer yet, or, the answer lost, not retried
      // yet), if newer credentials superseded it, or if credentials kept after failed writes were dropped
      // (another replica held the Lease since). Kept credentials whose write had been applied after all are
      // recorded when the refresher writes them again (it finds them stored).
      expect(rotations - recorded).toBeLessThanOrEqual(faults.sigkill + superseded + dropped);
      expect(faults.sigkill).toBeGreaterThan(0);
    } finally {
      injecting = false;
      await stopAll(processes);
      dumpLogs('grants-under-faults', processes, { 'end-check': importerLogs.lines });
      await importer?.stop();
      await tokenProxy.close();
      for (const { proxy } of apiProxies.values()) await proxy.close();
      await bed.close();
    }
  },
  REFRESH_PHASE_MS + 900_000,
);
