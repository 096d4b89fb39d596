/**
 * End to end on a real node (dev/local-node.ts): the chart installed the way a platform team does
 * (docs/install.md), its pods run by kubelet and Ready by their probes, requests through the
 * Service (kube-proxy's rules): imports and fetches, OAuth 2 refreshes at the oidc-provider peer, the
 * proxy, the Connect UI in Chromium and its auth webhook; then `helm upgrade` to a new image tag under
 * steady load with no failed request and no refresh done twice, a drain-style eviction of a
 * controller pod held to the PodDisruptionBudget, `helm rollback` and `helm uninstall`. The cases run
 * in order on one release.
 *
 * The peers run on the host, on the node's address (the pods reach nothing else): oidc-provider over
 * HTTPS with a CA made at test start (Latchkey sends token requests over plain HTTP to loopback
 * only), which the release trusts through config.egress.caBundle, and the address is in
 * config.egress.allow, as docs/install.md tells a platform team with a private provider.
 *
 * Runs by `npm run test:e2e` (jest.e2e.config.js). On a machine where the node cannot start (not
 * root, no cgroups...) its one case is reported skipped with the reason in its name.
 */
import { AppsV1Api, CoordinationV1Api, type CoreV1Api, CustomObjectsApi, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { existsSync, readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { createEnvironment, createIntegration, type TestEnvironment } from '../../dev/fixtures.js';
import { NODE_CPU_SHARES } from '../../dev/node-cleanup.js';
import { CGROUP_ROOT } from '../../dev/node-config.js';
import { connectionObjectName } from '../../src/k8s/names.js';
import { GROUP, VERSION } from '../../src/k8s/resources.js';
import { CHART } from '../chart/helm.js';
import { launchBrowser, openConnectPopup, waitForEvent } from '../support/browser.js';
import { appPage } from '../support/servers/app-page.js';
import { startUpstream, type Upstream } from '../support/servers/upstream.js';
import { signatureValid, webhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver.js';
import { keysAndOidcLoad, startSteadyLoad, timedChange } from './steady-load.js';
import { describeOnNode, IMAGE_REPO, keepPodLogs, logAs, startNodeBed, tagE2eImage, until, type NodeBed } from './support/node-bed.js';
import { applyOidcIntegration, expectEachRefreshOnce, startOidcPeer, type OidcPeer } from './support/oidc-peer.js';
import { installRelease, RELEASE, RELEASE_NS as NS, releasePods, restartsOf, restClient, serviceUrlOf } from './support/release.js';

const APP_NS = 'shop';
const TAG_A = 'e2e-a';
const TAG_B = 'e2e-b';
const CASE_MS = 600_000;
/** The OAuth client at the oidc-provider peer (the Integration's). */
const CLIENT = { clientId: 'e2e-client', clientSecret: 'e2e-client-secret-value' };
/** Access tokens live a minute: the controller refreshes each 15 s before expiry (a quarter of its life). */
const TOKEN_TTL_S = 60;
/** Connections whose tokens keep refreshing through the upgrade and the rollback (each its own account at the peer). */
const SHORT = Array.from({ length: 8 }, (_, i) => `short-${i}`);

let bed: NodeBed;
let kc: KubeConfig;
let core: CoreV1Api;
let env: TestEnvironment;
let serviceUrl: string;
let peer: OidcPeer;
let upstream: Upstream;
let receiver: WebhookReceiver;

const log = logAs('e2e');
const pods = (component?: string): Promise<V1Pod[]> => releasePods(core, component);
const restarts = async () => restartsOf(await pods());

const isReady = (p: V1Pod) =>
  !p.metadata?.deletionTimestamp && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

const rest = restClient(() => ({ url: serviceUrl, secretKey: env.secretKey }));

/** Imports an OAuth 2 connection with tokens the peer minted for an account of the connection's name. */
async function importOAuth(connectionId: string, expiresInS: number) {
  const tokens = await peer.oidc.mintTokens({ clientId: CLIENT.clientId, accountId: connectionId });
  const expiresAt = Date.now() + expiresInS * 1000;
  const r = await rest('POST', '/connections', {
    provider_config_key: 'oidc',
    connection_id: connectionId,
    credentials: {
      type: 'OAUTH2',
      access_token: tokens.accessToken,
      refresh_token: tokens.refreshToken,
      expires_at: new Date(expiresAt).toISOString(),
    },
  });
  expect([connectionId, r.status]).toEqual([connectionId, 201]);
  return { accessToken: tokens.accessToken, expiresAt };
}

const refreshGrants = (accountId?: string) => peer.refreshGrants(accountId === undefined ? undefined : [accountId]);

const importKey = (connectionId: string) =>
  rest('POST', '/connections', {
    provider_config_key: 'keys',
    connection_id: connectionId,
    credentials: { type: 'API_KEY', apiKey: `key-${connectionId}` },
  });

/** The image every container of the release's pods runs, by component. */
async function imagesByComponent(): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const p of (await pods()).filter((x) => !x.metadata?.deletionTimestamp)) {
    const c = p.metadata!.labels!['app.kubernetes.io/component']!;
    out[c] = [...(out[c] ?? []), ...(p.spec?.containers ?? []).map((x) => x.image!)].sort();
  }
  return out;
}

/**
 * Runs a release change under steady load through the Service (10 requests a second: fetches and
 * imports) and checks that no request failed and every import is stored; returns the outcomes.
 */
async function underLoad(prefix: string, change: () => Promise<unknown>) {
  const load = startSteadyLoad(keysAndOidcLoad(serviceUrl, env.secretKey, prefix, SHORT), 100);
  const podLogs = keepPodLogs(bed, `e2e-${prefix}`);
  const { started, ended } = await timedChange(3000, change, () => load.stop());
  const outcomes = load.outcomes;
  for (const failed of outcomes.filter((o) => !o.ok)) {
    const account = failed.what.replace(/^fetch /, '');
    const grants = refreshGrants(account).map((g) => `${g.at - started} ms: ${g.status}${g.error ? ` ${g.error}` : ''}`);
    log(
      `${prefix}: ${failed.what} failed (${failed.detail}), sent ${failed.at - failed.ms - started} ms after the change began${grants.length ? `; its refreshes at the peer: ${grants.join(', ')}` : ''}`,
    );
  }
  const kept = podLogs.end(outcomes.some((o) => !o.ok));
  if (kept) log(`${prefix}: the pods' logs are in ${kept}`);
  const during = outcomes.filter((o) => o.at >= started && o.at <= ended);
  const before = outcomes.filter((o) => o.at < started);
  const p = (list: typeof outcomes, q: number) => [...list].sort((a, b) => a.ms - b.ms)[Math.floor(q * (list.length - 1))]?.ms;
  log(
    `${prefix}: the change took ${ended - started} ms; ${outcomes.length} requests, ${during.length} during it ` +
      `(${((during.length * 1000) / Math.max(1, ended - started)).toFixed(1)}/s; latency p50 ${p(during, 0.5)} ms, p99 ${p(during, 0.99)} ms; ` +
      `before it p50 ${p(before, 0.5)} ms, p99 ${p(before, 0.99)} ms), ${outcomes.filter((o) => !o.ok).length} failed`,
  );
  expect(outcomes.filter((o) => !o.ok).map((o) => `${o.what}: ${o.detail}`)).toEqual([]);
  expect(during.length).toBeGreaterThan(10);
  // Every import the load made is stored.
  const imported = outcomes.filter((o) => o.what.startsWith('import ')).map((o) => o.what.slice('import '.length));
  const list = await rest('GET', '/connections?limit=1000');
  const ids = new Set((list.body.connections as { connection_id: string }[]).map((c) => c.connection_id));
  expect(imported.filter((id) => !ids.has(id))).toEqual([]);
  return { outcomes, started, ended };
}

describeOnNode('the chart on a local node', () => {
  beforeAll(async () => {
    bed = await startNodeBed(log, [TAG_A, TAG_B].map(tagE2eImage));
    ({ kc, core } = bed);
    // The host's peers, on the node's address (what the pods reach of the host).
    peer = await startOidcPeer(bed.node, [CLIENT], TOKEN_TTL_S);
    upstream = await startUpstream({ host: bed.node.nodeAddress });
    receiver = await webhookReceiver(0, bed.node.nodeAddress);
    await receiver.listen();
  }, 1_800_000);

  afterAll(async () => {
    await Promise.all([peer?.close(), upstream?.close(), receiver?.close()]);
    await bed?.stop();
  }, 120_000);

  test(
    'helm install --wait: 2 controllers and 2 servers Ready by their probes, the catalog applied',
    async () => {
      // The platform team's private CA, in the release namespace before the install (docs/install.md); the
      // peers on the host: a private address, and a certificate of a private CA.
      const took = await installRelease(bed, peer.ca.caCert, { image: `${IMAGE_REPO}:${TAG_A}`, controllers: 2, servers: 2 });
      // Measured, not asserted (docs/benchmarks.md): the whole catalog is one post-install hook.
      log(`helm install --wait took ${took} ms`);
      const all = await pods();
      expect(all.map((p) => p.metadata!.labels!['app.kubernetes.io/component']).sort()).toEqual([
        'controller',
        'controller',
        'server',
        'server',
      ]);
      expect(all.filter((p) => !isReady(p)).map((p) => p.metadata!.name)).toEqual([]);
      // The pods' weight against the host's processes (dev/node-cleanup.ts): at the default they starved on a shared machine.
      const shares = `/sys/fs/cgroup/cpu${CGROUP_ROOT}/cpu.shares`;
      if (existsSync(shares)) expect(readFileSync(shares, 'utf8').trim()).toBe(String(NODE_CPU_SHARES));
      // Ready through the probes kubelet ran, without a restart.
      expect(all.flatMap((p) => p.status!.containerStatuses!.map((s) => s.restartCount))).toEqual([0, 0, 0, 0]);
      const providers = (await kc
        .makeApiClient(CustomObjectsApi)
        .listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'providers' })) as { items: unknown[] };
      expect(providers.items.length).toBeGreaterThan(10);

      serviceUrl = await serviceUrlOf(core);
      await core.createNamespace({ body: { metadata: { name: APP_NS } } });
      env = await createEnvironment(kc, APP_NS, { webhooks: { url: receiver.url } });
      // A shipped API-key provider that declares no typed-key check: the pods have no way out to the real
      // provider, and a declared check (OpenAI's) would refuse every key typed into the form here.
      await createIntegration(kc, APP_NS, 'keys', { provider: 'mistral' });
      await applyOidcIntegration(kc, APP_NS, peer, `${upstream.origin}/api`, CLIENT);
    },
    CASE_MS,
  );

  test(
    'through the Service: an import, then its fetch, answered by the pods',
    async () => {
      // The servers see the new Environment and Integration through their watches.
      const created = await until('the import to be accepted', async () => {
        const r = await importKey('first');
        return r.status === 201 && r;
      });
      expect(created.body.connection_id).toBe('first');
      const fetched = await rest('GET', '/connections/first?provider_config_key=keys');
      expect(fetched.status).toBe(200);
      expect(fetched.body.credentials).toEqual({ type: 'API_KEY', apiKey: 'key-first' });
      expect((await rest('GET', '/connections/first?provider_config_key=nope')).status).toBe(404);
    },
    CASE_MS,
  );

  test(
    'an OAuth 2 connection at an HTTPS provider of a private CA: refreshed through a server pod (force_refresh), and by a controller before expiry',
    async () => {
      const first = await until('the OAuth import to be accepted', async () => {
        const r = await rest('GET', '/integrations/oidc');
        return r.status === 200 && importOAuth('oauth-first', 3600);
      });
      // Until both server pods have the connection (a pod without it answers 404 and calls no one).
      const forced = await until('a forced refresh through the Service', async () => {
        const r = await rest('GET', '/connections/oauth-first?provider_config_key=oidc&force_refresh=true');
        return r.status === 200 && r;
      });
      expect(forced.body.credentials.access_token).not.toBe(first.accessToken);
      const [byServer] = refreshGrants('oauth-first');
      expect(byServer?.status).toBe(200);

      // Expiring within the refresh margin: a controller refreshes it on its own, before it expires.
      const soon = await importOAuth('oauth-soon', 120);
      const grant = await until('a refresh of oauth-soon by a controller', async () => refreshGrants('oauth-soon')[0]);
      expect([grant.status, grant.at < soon.expiresAt]).toEqual([200, true]);
      const after = await until('the refreshed token to be stored', async () => {
        const r = await rest('GET', '/connections/oauth-soon?provider_config_key=oidc');
        return r.status === 200 && r.body.credentials.access_token !== soon.accessToken && r;
      });
      expect(Date.parse(after.body.credentials.expires_at)).toBeGreaterThan(soon.expiresAt - 120_000 + TOKEN_TTL_S * 1000 - 5000);
      expect(refreshGrants('oauth-soon').filter((g) => g.status !== 200)).toEqual([]);
    },
    CASE_MS,
  );

  test(
    'the proxy: a call through the Service reaches the upstream on the host with the access token injected',
    async () => {
      const res = await fetch(`${serviceUrl}/proxy/items?page=2`, {
        headers: { authorization: `Bearer ${env.secretKey}`, 'connection-id': 'oauth-first', 'provider-config-key': 'oidc' },
        signal: AbortSignal.timeout(10_000),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-upstream')).toBe('yes');
      const seen = upstream.requests.at(-1)!;
      expect(seen.url).toBe('/api/items?page=2');
      const current = await rest('GET', '/connections/oauth-first?provider_config_key=oidc');
      expect(seen.headers.authorization).toBe(`Bearer ${current.body.credentials.access_token}`);
      expect(JSON.stringify(seen.headers)).not.toContain(env.secretKey);
    },
    CASE_MS,
  );

  test(
    'the Connect UI in Chromium through the Service: an API key by the form, its auth webhook delivered to the host, signed',
    async () => {
      const session = await rest('POST', '/connect/sessions', {
        end_user: { id: 'e2e-user', tags: { team: 'web' } },
        allowed_integrations: ['keys'],
      });
      expect(session.status).toBe(201);
      const app = await appPage(serviceUrl);
      let browser: Browser | undefined;
      try {
        browser = await launchBrowser();
        const context = await browser.newContext();
        const { app: page, popup } = await openConnectPopup(context, app.url, session.body.data.token);
        await popup.waitForSelector('#f-values-apiKey');
        // The page, its scripts and its form API come from a server pod through the Service.
        expect(new URL(popup.url()).origin).toBe(new URL(serviceUrl).origin);
        await popup.fill('#f-values-apiKey', 'sk-from-the-form');
        await popup.click('button[type=submit]');
        const connected = await waitForEvent(page, 'connect', 30_000);
        // Production mode (the default): the frontend gets no connection ID; the application's backend gets it by the webhook.
        expect([connected.providerConfigKey, connected.connectionId]).toEqual(['keys', undefined]);
        const hook = await until('the auth webhook at the host', async () =>
          receiver.delivered().find((w) => (w.json.endUser as { endUserId?: string } | undefined)?.endUserId === 'e2e-user'),
        );
        expect(signatureValid(env.webhookSigningKey, hook)).toBe(true);
        expect(hook.json).toMatchObject({ type: 'auth', operation: 'creation', success: true, providerConfigKey: 'keys' });
        const stored = await rest('GET', `/connections/${encodeURIComponent(String(hook.json.connectionId))}?provider_config_key=keys`);
        expect([stored.status, stored.body.credentials]).toEqual([200, { type: 'API_KEY', apiKey: 'sk-from-the-form' }]);
      } finally {
        await browser?.close();
        await app.close();
      }
    },
    CASE_MS,
  );

  test(
    'helm upgrade to a new image tag under steady load: no failed request, every pod on the new tag, no refresh done twice',
    async () => {
      // Due one after the other from 3 s on (imported tokens of unknown lifetime are due 300 s before
      // expiry), then every 45 s: refreshes by the controllers, and by the servers for the load's fetches,
      // while the pods of both are replaced and the shards move.
      for (const [i, id] of SHORT.entries()) await importOAuth(id, 300 + 3 * (i + 1));
      // The load fetches them through either server pod: each has them once a few fetches in a row answer.
      for (const id of SHORT)
        await until(`${id} at both server pods`, async () => {
          for (let n = 0; n < 4; n++) if ((await rest('GET', `/connections/${id}?provider_config_key=oidc`)).status !== 200) return false;
          return true;
        });
      const { started, ended } = await underLoad('up', () =>
        // --reuse-values, as a platform team upgrades: the release's values, the new chart's templates.
        bed.helm.ok(['upgrade', RELEASE, CHART, '-n', NS, '--reuse-values', '--set', `image.tag=${TAG_B}`, '--wait', '--timeout', '5m']),
      );
      const perConnection = expectEachRefreshOnce(peer, SHORT);
      const during = refreshGrants().filter((g) => g.accountId && SHORT.includes(g.accountId) && g.at >= started && g.at <= ended);
      log(`refreshes of ${SHORT.length} short-lived connections: ${JSON.stringify(perConnection)}, ${during.length} during the upgrade`);
      expect(during.length).toBeGreaterThan(0);
      await until('only pods of the new tag', async () => {
        const images = await imagesByComponent();
        return [...images.controller!, ...images.server!].every((i) => i === `${IMAGE_REPO}:${TAG_B}`) && images;
      });
      expect(await imagesByComponent()).toEqual({
        controller: [`${IMAGE_REPO}:${TAG_B}`, `${IMAGE_REPO}:${TAG_B}`],
        server: [`${IMAGE_REPO}:${TAG_B}`, `${IMAGE_REPO}:${TAG_B}`],
      });
      expect(await restarts()).toEqual([]);
    },
    CASE_MS,
  );

  test(
    'eviction of a controller pod: the PodDisruptionBudget refuses the second, the shard goes to the others',
    async () => {
      const [first, second] = (await pods('controller')).map((p) => p.metadata!.name!);
      const evict = (name: string) =>
        core
          .createNamespacedPodEviction({
            name,
            namespace: NS,
            body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: NS } },
          })
          .then(
            () => 201,
            (err: { code?: number }) => err.code ?? 0,
          );
      expect(await evict(first!)).toBe(201);
      // One of two may be unavailable: with the first gone and its replacement not Ready, the second stays.
      expect(await evict(second!)).toBe(429);
      const leases = kc.makeApiClient(CoordinationV1Api);
      const holders = await until('the shard Leases to name only live controller pods, two of them', async () => {
        const controllers = (await pods('controller')).filter(isReady).map((p) => p.metadata!.name!);
        if (controllers.length !== 2 || controllers.includes(first!)) return false;
        const shard = (await leases.listNamespacedLease({ namespace: NS, labelSelector: 'latchkey.dev/shard-member' })).items;
        const live = shard
          .filter(
            (l) => l.spec?.renewTime && Date.now() - new Date(l.spec.renewTime).getTime() < (l.spec.leaseDurationSeconds ?? 15) * 1000,
          )
          .map((l) => l.spec!.holderIdentity!)
          .sort();
        return JSON.stringify(live) === JSON.stringify(controllers.sort()) && live;
      });
      expect(holders).not.toContain(first);
      // Connections stay served.
      expect((await rest('GET', '/connections/first?provider_config_key=keys')).status).toBe(200);
    },
    CASE_MS,
  );

  test(
    'helm rollback to the first revision: the pods run the first tag again and serve',
    async () => {
      await underLoad('back', () => bed.helm.ok(['rollback', RELEASE, '1', '-n', NS, '--wait', '--timeout', '5m']));
      expectEachRefreshOnce(peer, [...SHORT, 'oauth-first', 'oauth-soon']);
      // On a busy node the liveness probe once killed pods that were starting or serving (the chart's startup probe since).
      expect(await restarts()).toEqual([]);
      await until('only pods of the first tag', async () => {
        const images = await imagesByComponent();
        return [...images.controller!, ...images.server!].every((i) => i === `${IMAGE_REPO}:${TAG_A}`) && (await pods()).every(isReady);
      });
      const fetched = await rest('GET', '/connections/first?provider_config_key=keys');
      expect({ status: fetched.status, credentials: fetched.body?.credentials }).toEqual({
        status: 200,
        credentials: { type: 'API_KEY', apiKey: 'key-first' },
      });
    },
    CASE_MS,
  );

  test(
    'helm uninstall: the release is gone; the connections and their Secrets stay, as crds.keep says',
    async () => {
      await bed.helm.ok(['uninstall', RELEASE, '-n', NS, '--wait', '--timeout', '5m']);
      const apps = kc.makeApiClient(AppsV1Api);
      expect((await apps.listNamespacedDeployment({ namespace: NS })).items).toEqual([]);
      await until('the pods to be gone', async () => (await pods()).length === 0);
      // crds.keep (the default) keeps the CRDs, so Connections and the Secrets they own stay.
      const secret = await core
        .readNamespacedSecret({ name: connectionObjectName('keys', 'first'), namespace: APP_NS })
        .catch(() => undefined);
      const connections = (await kc
        .makeApiClient(CustomObjectsApi)
        .listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: APP_NS, plural: 'connections' })) as {
        items: { metadata: { name: string; uid: string } }[];
      };
      const owner = connections.items.find((c) => c.metadata.uid === secret?.metadata?.ownerReferences?.[0]?.uid);
      expect(owner).toBeDefined();
    },
    CASE_MS,
  );
});
