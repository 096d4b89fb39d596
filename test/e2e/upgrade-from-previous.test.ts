/**
 * An upgrade from the previous release, under load, on a real node (dev/local-node.ts): the release
 * CHANGELOG.md names before package.json's version is built from git (dev/previous-release.ts: its
 * own chart and image, cached by commit), installed, and given connections of the stored kinds (OAuth
 * 2 with refresh at the oidc-provider peer, OAuth 1 at the oauthlib server, an API key, a GitHub App
 * installation (APP) at the GitHub fake, a Zoho one with the old `domainExtension` configuration;
 * metadata on each). Under steady load (fetches, imports,
 * proxied calls, refreshes of one-minute tokens) `helm upgrade` to this checkout's chart and image
 * with `migrations.enabled`, then `helm rollback` to the previous release. Asserted: no failed
 * request, no refresh token presented twice, every connection read back with its values, the new
 * stored form at a connection's next write (and not before), the migration Job's change and its
 * operation-log entry, and the previous release serving what the new one wrote (CHANGELOG.md's
 * upgrade notes say how it reads it). One exception, which the upgrade notes state: the previous
 * release's server pods close their listener and connections at SIGTERM, so a connection refused or
 * closed within a moment of one stopping is counted apart (and printed), not failed. The run's figures go to the output
 * (`[upgrade]` lines).
 *
 * The previous release has no setting for a private CA (0.2.0 added config.egress.caBundle): its pods
 * trust the test's CA through NODE_OPTIONS (`--import` of a module that adds it to Node's default CA
 * certificates), set with the release's extraEnv; the upgrade's values use caBundle instead.
 *
 * Runs by `npm run test:e2e` (jest.e2e.config.js); reported skipped, with the reason, where a node cannot start.
 */
import { CustomObjectsApi, type CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyProvider, createEnvironment, createIntegration, type TestEnvironment } from '../../dev/fixtures.js';
import { preparePreviousRelease, type PreviousRelease } from '../../dev/previous-release.js';
import { requestTemporaryCredentials, requestTokenCredentials } from '../../src/modes/shared/oauth1.js';
import { connectionObjectName } from '../../src/k8s/names.js';
import { CREDENTIALS_KEY, GROUP, VERSION } from '../../src/k8s/resources.js';
import { RAW_REFS } from '../../src/k8s/stored-credentials.js';
import { CHART } from '../chart/helm.js';
import { githubAppProviderSpec } from '../support/github-app-bed.js';
import { startGitHubAppServer, type FakeApp, type FakeInstallation, type GitHubAppServer } from '../support/servers/github-app-server.js';
import { startOAuth1Server, type OAuth1TestServer } from '../support/servers/oauth1-server.js';
import { startUpstream, type Upstream } from '../support/servers/upstream.js';
import { keysAndOidcLoad, startSteadyLoad, timedChange, type LoadOutcome } from './steady-load.js';
import { describeOnNode, keepPodLogs, logAs, startNodeBed, tagE2eImage, until, type NodeBed } from './support/node-bed.js';
import { applyOidcIntegration, expectEachRefreshOnce as eachRefreshOnce, startOidcPeer, type OidcPeer } from './support/oidc-peer.js';
import { createReleaseNamespace, RELEASE, RELEASE_NS as NS, releasePods, restartsOf, restClient, serviceUrlOf } from './support/release.js';

const APP_NS = 'shop';
const CURRENT_IMAGE = { repository: 'localhost/latchkey', tag: 'e2e-upgrade' };
const CASE_MS = 900_000;
const CLIENT = { clientId: 'e2e-client', clientSecret: 'e2e-client-secret-value' };
const CONSUMER = { clientId: 'consumer_key_latchkey_e2e_1', clientSecret: 'consumer-secret-of-the-e2e' };
/** Access tokens live a minute: refreshed every 45 s, by the controllers and, on fetch, by the servers. */
const TOKEN_TTL_S = 60;
const SHORT = Array.from({ length: 6 }, (_, i) => `short-${i}`);
/** Connections made by the previous release, with what the test sent for each. */
const METADATA = (id: string) => ({ team: 'platform', made_by: 'previous-release', id });
const ZOHO = {
  id: 'zoho-eu',
  config: { domainExtension: 'eu' },
  migrated: { accountsServer: 'accounts.zoho.eu', apiDomain: 'www.zohoapis.eu' },
};
/** The GitHub App installation (APP): its token is minted from the app's key, no refresh token. */
const APP_CONNECTION = 'app-install';

let previous: PreviousRelease;
let bed: NodeBed;
let kc: KubeConfig;
let core: CoreV1Api;
let env: TestEnvironment;
let serviceUrl: string;
let peer: OidcPeer;
let oauth1: OAuth1TestServer;
let gh: GitHubAppServer;
let ghApp: FakeApp;
/** The installation the APP connection imports (made at the GitHub fake, as an end user's earlier install). */
let installation: FakeInstallation;
let upstream: Upstream;
let valuesDir: string;
/** Each connection's answer from the previous release before the upgrade. */
const before = new Map<string, ConnectionView>();
/** The run's figures, printed at the end. */
const figures: string[] = [];
const suiteStarted = Date.now();

interface ConnectionView {
  credentials: Record<string, unknown>;
  metadata: unknown;
  connection_config: unknown;
}

const log = logAs('upgrade');
const rest = restClient(() => ({ url: serviceUrl, secretKey: env.secretKey }));

const connectionsOf = (): Array<[string, string]> => [
  ['keys', 'first'],
  ['oidc', 'oauth-meta'],
  ...SHORT.map((id): [string, string] => ['oidc', id]),
  ['tumble', 'oauth1-first'],
  ['github', APP_CONNECTION],
  ['zoho', ZOHO.id],
];

async function read(integration: string, id: string): Promise<ConnectionView> {
  const r = await rest('GET', `/connections/${id}?provider_config_key=${integration}`);
  expect([id, r.status]).toEqual([id, 200]);
  return { credentials: r.body.credentials, metadata: r.body.metadata, connection_config: r.body.connection_config };
}

/** The connection's credentials as stored in its Secret (not as the API answers them). */
async function stored(integration: string, id: string): Promise<Record<string, any>> {
  const secret = await core.readNamespacedSecret({ name: connectionObjectName(integration, id), namespace: APP_NS });
  return JSON.parse(Buffer.from(secret.data![CREDENTIALS_KEY]!, 'base64').toString('utf8')) as Record<string, any>;
}

const refreshGrants = (ids: string[]) => peer.refreshGrants(ids);

/** No refresh token presented twice (oidc-provider rotates them; a reuse also revokes the grant), none refused; the refreshes in all. */
const expectEachRefreshOnce = (ids: string[]): number => Object.values(eachRefreshOnce(peer, ids)).reduce((a, b) => a + b, 0);

/** A live access token of the oidc-provider peer (what a real API would accept). */
async function liveAccessToken(token: unknown): Promise<boolean> {
  if (typeof token !== 'string') return false;
  const found = await peer.oidc.provider.AccessToken.find(token);
  return !!found && !found.isExpired;
}

/** A live installation token the GitHub fake minted for the installation (what GitHub's API would accept). */
const liveInstallationToken = (token: unknown, installationId: number): boolean =>
  gh.installationTokens.some((t) => t.token === token && t.installationId === installationId && t.expiresAt > Date.now());

/**
 * The APP connection as the previous release answered it: the same installation and configuration, a
 * live installation token (re-minted or not), and a proxied call that GitHub (the fake) accepts.
 */
async function expectInstallationServed(now: ConnectionView, was: ConnectionView): Promise<void> {
  expect(now.connection_config).toEqual(was.connection_config);
  expect((now.connection_config as { installationId?: string }).installationId).toBe(String(installation.id));
  const live = liveInstallationToken(now.credentials.access_token, installation.id);
  if (!live) {
    const minted = gh.installationTokens.find((t) => t.token === now.credentials.access_token);
    log(
      `${APP_CONNECTION}: credential keys ${Object.keys(now.credentials).join(', ')}; its token ${minted ? `minted for installation ${minted.installationId}, expiring in ${minted.expiresAt - Date.now()} ms` : 'not one the fake minted'}`,
    );
  }
  expect([now.credentials.type, live]).toEqual(['APP', true]);
  const proxied = await fetch(`${serviceUrl}/proxy/installation/repositories`, {
    headers: { authorization: `Bearer ${env.secretKey}`, 'connection-id': APP_CONNECTION, 'provider-config-key': 'github' },
    signal: AbortSignal.timeout(10_000),
  });
  expect(proxied.status).toBe(200);
  expect(((await proxied.json()) as { installation_id?: number }).installation_id).toBe(installation.id);
}

/**
 * Each connection read back with its metadata; the short ones with a live token, the installation
 * served; the others as `others` checks them against what the previous release answered before.
 */
async function expectEachReadBack(others: (id: string, now: ConnectionView, was: ConnectionView) => Promise<void>): Promise<void> {
  for (const [integration, id] of connectionsOf()) {
    const now = await read(integration, id);
    const was = before.get(id)!;
    expect([id, now.metadata]).toEqual([id, was.metadata]);
    if (SHORT.includes(id)) {
      const live = await liveAccessToken(now.credentials.access_token);
      if (!live) {
        const grants = refreshGrants([id]).map((g) => `${g.at - Date.now()} ms: ${g.status}`);
        log(
          `${id}: the answered token is not live at the peer; its expires_at ${Date.parse(String(now.credentials.expires_at)) - Date.now()} ms from now; its refreshes: ${grants.join(', ')}`,
        );
      }
      expect([id, live]).toEqual([id, true]);
    } else if (id === APP_CONNECTION) await expectInstallationServed(now, was);
    else await others(id, now, was);
  }
}

/** The release's controller and server pods (not its hook Jobs'). */
const pods = async (): Promise<V1Pod[]> => (await releasePods(core, 'controller,server')).filter((p) => !p.metadata?.deletionTimestamp);

async function images(): Promise<string[]> {
  return [...new Set((await pods()).flatMap((p) => p.spec!.containers.map((c) => c.image!)))];
}

const restarts = async () => restartsOf(await pods());

/** The release's values as a platform team keeps them in a file: the same for both releases but the image and what each version offers. */
function valuesFile(name: string, values: Record<string, unknown>): string {
  const path = join(valuesDir, `${name}.yaml`);
  // JSON is YAML.
  writeFileSync(path, JSON.stringify(values, null, 2));
  return path;
}

function commonValues(image: { repository: string; tag: string }) {
  return {
    image: { ...image, pullPolicy: 'Never' },
    controller: { replicas: 2 },
    server: { replicas: 2 },
    config: { egress: { allow: [bed.node.nodeAddress] } },
  };
}

/** NODE_OPTIONS for the previous release's pods: adds the test's CA to Node's default CA certificates (it has no caBundle setting). */
function trustTestCa(): string {
  const module = `import tls from 'node:tls';\ntls.setDefaultCACertificates([...tls.getCACertificates('default'), ${JSON.stringify(peer.ca.caCert)}]);\n`;
  // With the heap flags the chart sets when extraEnv does not (75% of the smaller memory limit, the controller's 768Mi).
  return `--max-old-space-size=576 --max-semi-space-size=4 --import=data:text/javascript;base64,${Buffer.from(module).toString('base64')}`;
}

/** An OAuth 1.0a access token from the oauthlib server, by its three steps (the end user's approval posted as its page's form does). */
async function oauth1Token(): Promise<{ token: string; secret: string }> {
  const consumer = { consumerKey: CONSUMER.clientId, consumerSecret: CONSUMER.clientSecret, fetch };
  const temporary = await requestTemporaryCredentials(consumer, `${oauth1.url}/request_token`, 'http://127.0.0.1:9/callback');
  const approved = await fetch(`${oauth1.url}/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ oauth_token: temporary.token, action: 'approve' }).toString(),
    redirect: 'manual',
  });
  const verifier = new URL(approved.headers.get('location')!).searchParams.get('oauth_verifier')!;
  const credentials = await requestTokenCredentials(consumer, `${oauth1.url}/access_token`, temporary, verifier);
  return { token: credentials.oauth_token, secret: credentials.oauth_token_secret };
}

/**
 * Runs a release change under steady load (10 requests a second through the Service: fetches of an
 * API key and of the one-minute OAuth connections, imports, proxied calls with OAuth 2 and OAuth 1)
 * and checks that none failed and every import is stored. Logs the figures.
 */
async function underLoad(phase: string, change: () => Promise<unknown>, opts: { previousServersStop?: boolean } = {}) {
  const load = startSteadyLoad(
    { ...keysAndOidcLoad(serviceUrl, env.secretKey, phase, SHORT), proxy: { integration: 'oidc', connectionIds: SHORT, path: '/checked' } },
    100,
  );
  // OAuth 1 proxied calls beside it, one a second (the oauthlib server checks each signature and token).
  const oauth1Calls: LoadOutcome[] = [];
  const oauth1InFlight = new Set<Promise<unknown>>();
  const oauth1Timer = setInterval(() => {
    const sent = Date.now();
    const call = fetch(`${serviceUrl}/proxy/resource?phase=${phase}`, {
      headers: { authorization: `Bearer ${env.secretKey}`, 'connection-id': 'oauth1-first', 'provider-config-key': 'tumble' },
      signal: AbortSignal.timeout(10_000),
    }).then(
      async (res) => {
        const body = (await res.json().catch(() => undefined)) as { ok?: boolean } | undefined;
        oauth1Calls.push({
          what: 'proxy oauth1-first',
          ok: res.status === 200 && body?.ok === true,
          detail: String(res.status),
          at: Date.now(),
          ms: Date.now() - sent,
        });
      },
      (err: Error & { cause?: { code?: string } }) =>
        oauth1Calls.push({
          what: 'proxy oauth1-first',
          ok: false,
          detail: err.cause?.code ?? err.name,
          at: Date.now(),
          ms: Date.now() - sent,
        }),
    );
    oauth1InFlight.add(call);
    void call.finally(() => oauth1InFlight.delete(call));
  }, 1000);
  const podLogs = keepPodLogs(bed, `upgrade-${phase}`);
  // When each server pod of the previous release was seen stopping (its deletionTimestamp set).
  const stopping = new Map<string, number>();
  const watchStops = setInterval(() => {
    void core
      .listNamespacedPod({ namespace: NS, labelSelector: `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/component=server` })
      .then(
        (list) => {
          for (const p of list.items)
            if (p.metadata?.deletionTimestamp && p.spec?.containers[0]?.image === previous.image && !stopping.has(p.metadata.name!))
              stopping.set(p.metadata.name!, Date.now());
        },
        () => undefined,
      );
  }, 250);
  const { started, ended } = await timedChange(5000, change, async () => {
    clearInterval(oauth1Timer);
    clearInterval(watchStops);
    await Promise.all([load.stop(), ...oauth1InFlight]);
  });
  const outcomes = [...load.outcomes, ...oauth1Calls];
  // The previous release (0.1.0) closes its listener and its connections at SIGTERM, before the Service stops
  // sending to the pod (CHANGELOG.md, 0.2.0's upgrade notes): a connection refused or closed, or a request left
  // unanswered, sent as one of its server pods stops is that, and counted apart; anything else, or such an
  // error at another moment, fails the test.
  const atPreviousStop = (o: LoadOutcome) =>
    opts.previousServersStop === true &&
    ['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'TimeoutError'].includes(o.detail) &&
    [...stopping.values()].some((at) => o.at - o.ms >= at - 2000 && o.at - o.ms <= at + 3000);
  const refusedByStopping = outcomes.filter((o) => !o.ok && atPreviousStop(o));
  const failed = outcomes.filter((o) => !o.ok && !atPreviousStop(o));
  for (const f of failed) log(`${phase}: ${f.what} failed (${f.detail}) ${f.at - f.ms - started} ms after the change began`);
  const kept = podLogs.end(failed.length > 0);
  if (kept) log(`${phase}: the pods' logs are in ${kept}`);
  const count = (prefix: string) => outcomes.filter((o) => o.what.startsWith(prefix)).length;
  const refreshes = refreshGrants(SHORT).filter((g) => g.at >= started && g.at <= ended).length;
  const line =
    `${phase}: the change took ${ended - started} ms; ${outcomes.length} requests (${count('fetch')} fetches, ${count('import')} imports, ` +
    `${count('proxy')} proxied calls), ${outcomes.filter((o) => o.at >= started && o.at <= ended).length} during it, ${failed.length} failed` +
    `${opts.previousServersStop ? ` (${refusedByStopping.length} refused as a server pod of ${previous.version} stopped, of ${stopping.size} stopping)` : ''}; ` +
    `${refreshes} refreshes during it`;
  log(line);
  figures.push(line);
  expect(failed.map((o) => `${o.what}: ${o.detail}`)).toEqual([]);
  expect(count('proxy oauth1-first')).toBeGreaterThan(5);
  // Every import answered is stored (one cut off by a stopping 0.1.0 pod may be, or not: the client imports it again).
  const imported = outcomes.filter((o) => o.what.startsWith('import ') && o.ok).map((o) => o.what.slice('import '.length));
  const ids = new Set<string>();
  for (let cursor: string | null = ''; cursor !== null;) {
    const page = await rest('GET', `/connections?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    for (const c of page.body.connections as { connection_id: string }[]) ids.add(c.connection_id);
    cursor = (page.body.next_cursor as string | null | undefined) ?? null;
  }
  expect(imported.filter((id) => !ids.has(id))).toEqual([]);
  return { started, ended, refreshes };
}

describeOnNode('an upgrade from the previous release on a local node', () => {
  beforeAll(async () => {
    const t0 = Date.now();
    previous = preparePreviousRelease(log);
    // This checkout's image: the one the suite's global setup built (`npm run image`), under a tag of its own.
    const current = tagE2eImage(CURRENT_IMAGE.tag);
    figures.push(
      `images: previous release ${previous.version} (${previous.commit.slice(0, 7)}) and this checkout ready in ${Date.now() - t0} ms`,
    );
    bed = await startNodeBed(log, [previous.image, current]);
    ({ kc, core } = bed);
    peer = await startOidcPeer(bed.node, [CLIENT], TOKEN_TTL_S);
    oauth1 = await startOAuth1Server(CONSUMER.clientId, CONSUMER.clientSecret, undefined, bed.node.nodeAddress);
    gh = await startGitHubAppServer(bed.node.nodeAddress);
    // No Connect flow here (the installation is imported): the callback is never followed.
    ghApp = gh.addApp({ slug: 'latchkey-upgrade', callbackUrl: 'http://127.0.0.1:9/oauth/callback' });
    upstream = await startUpstream({ host: bed.node.nodeAddress });
    // A proxied call succeeds only with an access token the peer issued and that has not expired, as a real API.
    upstream.on('/api/checked', async (req, res) => {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const live = await liveAccessToken(token);
      res.writeHead(live ? 200 : 401, { 'content-type': 'application/json', 'x-upstream': 'yes' });
      res.end(JSON.stringify({ live }));
    });
    valuesDir = mkdtempSync(join(tmpdir(), 'latchkey-upgrade-values-'));
  }, 3_600_000);

  afterAll(async () => {
    await Promise.all([peer?.close(), oauth1?.close(), gh?.close(), upstream?.close()]);
    if (valuesDir) rmSync(valuesDir, { recursive: true, force: true });
    await bed?.stop();
    figures.push(`the whole file took ${Date.now() - suiteStarted} ms`);
    log(`figures:\n  ${figures.join('\n  ')}`);
  }, 120_000);

  test(
    'the previous release installed from its own chart and image; connections of each stored kind made by it',
    async () => {
      await createReleaseNamespace(core, peer.ca.caCert);
      const values = valuesFile('previous', {
        ...commonValues({ repository: previous.repository, tag: previous.tag }),
        extraEnv: [{ name: 'NODE_OPTIONS', value: trustTestCa() }],
      });
      const t = Date.now();
      await bed.helm.ok(['install', RELEASE, previous.chart, '-n', NS, '-f', values, '--wait', '--timeout', '10m'], 660_000);
      figures.push(`helm install of ${previous.version} took ${Date.now() - t} ms`);
      expect(await images()).toEqual([previous.image]);
      serviceUrl = await serviceUrlOf(core);

      await core.createNamespace({ body: { metadata: { name: APP_NS } } });
      env = await createEnvironment(kc, APP_NS);
      await createIntegration(kc, APP_NS, 'keys', { provider: 'mistral' });
      await applyOidcIntegration(kc, APP_NS, peer, `${upstream.origin}/api`, CLIENT);
      await applyProvider(kc, 'e2e-oauth1', {
        displayName: 'Tumble',
        authMode: 'OAUTH1',
        requestTokenUrl: `${oauth1.url}/request_token`,
        authorizationUrl: `${oauth1.url}/authorize`,
        tokenUrl: `${oauth1.url}/access_token`,
        proxy: { baseUrl: oauth1.url },
      });
      await createIntegration(kc, APP_NS, 'tumble', { provider: 'e2e-oauth1' }, CONSUMER);
      await createIntegration(kc, APP_NS, 'zoho', { provider: 'zoho-crm' }, CLIENT);
      await applyProvider(kc, 'e2e-github-app', githubAppProviderSpec(gh.origin, 'APP'));
      await createIntegration(
        kc,
        APP_NS,
        'github',
        { provider: 'e2e-github-app' },
        { appId: ghApp.id, privateKey: ghApp.privateKeyPem, appLink: `${gh.origin}/apps/${ghApp.slug}` },
      );

      const importConnection = async (integration: string, id: string, credentials: unknown, connectionConfig?: unknown) => {
        const r = await until(`the import of ${id}`, async () => {
          const res = await rest('POST', '/connections', {
            provider_config_key: integration,
            connection_id: id,
            credentials,
            metadata: METADATA(id),
            ...(connectionConfig ? { connection_config: connectionConfig } : {}),
          });
          return res.status === 201 && res;
        });
        expect(r.body.connection_id).toBe(id);
      };
      const oauth2 = async (id: string, expiresInS: number) => {
        const tokens = await peer.oidc.mintTokens({ clientId: CLIENT.clientId, accountId: id });
        return {
          type: 'OAUTH2',
          access_token: tokens.accessToken,
          refresh_token: tokens.refreshToken,
          expires_at: new Date(Date.now() + expiresInS * 1000).toISOString(),
        };
      };
      await importConnection('keys', 'first', { type: 'API_KEY', apiKey: 'key-first' });
      await importConnection('oidc', 'oauth-meta', await oauth2('oauth-meta', 3600));
      // Due one after the other from 3 s on (imported tokens of unknown lifetime are due 300 s before expiry), then every 45 s.
      for (const [i, id] of SHORT.entries()) await importConnection('oidc', id, await oauth2(id, 300 + 3 * (i + 1)));
      const token = await oauth1Token();
      await importConnection('tumble', 'oauth1-first', { type: 'OAUTH1', oauth_token: token.token, oauth_token_secret: token.secret });
      // An installation of the app made at GitHub (the fake) before: imported, its token minted with the app's key.
      installation = gh.addInstallation(ghApp.id, 'octo-org');
      await importConnection('github', APP_CONNECTION, { type: 'APP', installation_id: String(installation.id) });
      // Zoho as 0.1.0 stored it: the end user's data-centre extension; a day-long token (nothing refreshes it here: Zoho is not reachable).
      await importConnection(
        'zoho',
        ZOHO.id,
        {
          type: 'OAUTH2',
          access_token: `zoho-access-${'x'.repeat(24)}`,
          refresh_token: `zoho-refresh-${'y'.repeat(24)}`,
          expires_at: new Date(Date.now() + 86_400_000).toISOString(),
        },
        ZOHO.config,
      );

      // Each server pod has every connection, and each short one was refreshed once by the previous release.
      await until('every short connection refreshed by the previous release', async () =>
        SHORT.every((id) => refreshGrants([id]).length > 0),
      );
      for (const [integration, id] of connectionsOf())
        await until(`${id} at both server pods`, async () => {
          for (let n = 0; n < 4; n++)
            if ((await rest('GET', `/connections/${id}?provider_config_key=${integration}`)).status !== 200) return false;
          return true;
        });
      for (const [integration, id] of connectionsOf()) before.set(id, await read(integration, id));
      expect(before.get(ZOHO.id)!.connection_config).toEqual(ZOHO.config);
      expect(before.get('first')!.metadata).toEqual(METADATA('first'));
      // The installation as the previous release stored it: its ID, a token GitHub minted, the app's slug taken from GitHub.
      const app = before.get(APP_CONNECTION)!;
      expect([app.credentials.type, app.connection_config]).toEqual(['APP', expect.objectContaining({ appSlug: ghApp.slug })]);
      await expectInstallationServed(app, app);
      // The previous release's stored form: a refreshed token kept twice (at the top and in `raw`), no `raw_refs`.
      for (const id of SHORT) {
        const s = await stored('oidc', id);
        expect([id, RAW_REFS in s, s.raw?.access_token === s.access_token]).toEqual([id, false, true]);
      }
      const o1 = await stored('tumble', 'oauth1-first');
      expect([RAW_REFS in o1, o1.raw?.oauth_token === o1.oauth_token]).toEqual([false, true]);
      // The proxy of the previous release, both kinds.
      const proxied = await fetch(`${serviceUrl}/proxy/resource`, {
        headers: { authorization: `Bearer ${env.secretKey}`, 'connection-id': 'oauth1-first', 'provider-config-key': 'tumble' },
      });
      expect(proxied.status).toBe(200);
    },
    CASE_MS,
  );

  test(
    'helm upgrade to this chart and image with migrations.enabled, under load: nothing fails, nothing is lost, the Zoho connection migrated',
    async () => {
      const values = valuesFile('current', {
        ...commonValues(CURRENT_IMAGE),
        config: { egress: { allow: [bed.node.nodeAddress], caBundle: { configMap: 'provider-ca' } } },
        migrations: { enabled: true },
      });
      const { ended } = await underLoad(
        'upgrade',
        () => bed.helm.ok(['upgrade', RELEASE, CHART, '-n', NS, '-f', values, '--wait', '--timeout', '10m'], 660_000),
        { previousServersStop: true },
      );
      const refreshed = expectEachRefreshOnce([...SHORT, 'oauth-meta']);
      figures.push(`refreshes so far: ${refreshed}, every refresh token presented once`);
      await until('only pods of this image', async () => {
        const now = await images();
        return now.length === 1 && now[0] === `${CURRENT_IMAGE.repository}:${CURRENT_IMAGE.tag}`;
      });
      expect(await restarts()).toEqual([]);

      // Every connection read back with its values; the Zoho one with the migrated configuration.
      await expectEachReadBack(async (id, now, was) => {
        expect([id, now.credentials]).toEqual([id, was.credentials]);
        expect([id, now.connection_config]).toEqual([id, id === ZOHO.id ? ZOHO.migrated : was.connection_config]);
      });
      // The migration Job ran (a post-upgrade hook, deleted once it succeeded): its change and its operation-log entry.
      const custom = kc.makeApiClient(CustomObjectsApi);
      const zoho = (await custom.getNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: APP_NS,
        plural: 'connections',
        name: connectionObjectName('zoho', ZOHO.id),
      })) as { spec: { connectionConfig?: Record<string, unknown> } };
      expect(zoho.spec.connectionConfig).toEqual(ZOHO.migrated);
      const logs = await rest('GET', `/logs?connection_id=${ZOHO.id}&operation=migration`);
      expect(logs.status).toBe(200);
      expect(logs.body.logs).toEqual([
        expect.objectContaining({ operation: 'migration', step: 'zoho-data-centre', outcome: 'success', integration: 'zoho' }),
      ]);

      // The new stored form at a connection's next write, not before: each short connection once refreshed
      // by this release stores a token once (`raw_refs`); the OAuth 1 one, not written since, keeps the old form.
      await until('a refresh of every short connection by this release', async () =>
        SHORT.every((id) => refreshGrants([id]).some((g) => g.at > ended)),
      );
      for (const id of SHORT) {
        const s = await until(`${id} written by this release`, async () => {
          const x = await stored('oidc', id);
          return RAW_REFS in x && x;
        });
        expect([id, 'access_token' in s.raw, 'refresh_token' in s.raw]).toEqual([id, false, false]);
      }
      const untouched = await stored('tumble', 'oauth1-first');
      expect(RAW_REFS in untouched).toBe(false);
      // Its next write (the application imports the same tokens again) stores the new form, and reads back as before.
      const again = before.get('oauth1-first')!.credentials;
      const reimport = await rest('POST', '/connections', {
        provider_config_key: 'tumble',
        connection_id: 'oauth1-first',
        credentials: { type: 'OAUTH1', oauth_token: again.oauth_token, oauth_token_secret: again.oauth_token_secret },
      });
      expect(reimport.status).toBe(200);
      const rewritten = await stored('tumble', 'oauth1-first');
      expect([RAW_REFS in rewritten, 'oauth_token' in rewritten.raw]).toEqual([true, false]);
      await until('oauth1-first read back as before at both server pods', async () => {
        for (let n = 0; n < 4; n++) {
          const now = await read('tumble', 'oauth1-first');
          if (JSON.stringify(now.credentials) !== JSON.stringify(again)) return false;
        }
        return true;
      });
    },
    CASE_MS,
  );

  test(
    'helm rollback to the previous release under load: it keeps serving what this one wrote',
    async () => {
      const { ended } = await underLoad('rollback', () =>
        bed.helm.ok(['rollback', RELEASE, '1', '-n', NS, '--wait', '--timeout', '10m'], 660_000),
      );
      await until('only pods of the previous release', async () => {
        const now = await images();
        return now.length === 1 && now[0] === previous.image;
      });
      expect(await restarts()).toEqual([]);
      // The previous release refreshes tokens this one stored (in the new form), each refresh token presented once.
      await until('a refresh of every short connection by the previous release after the rollback', async () =>
        SHORT.every((id) => refreshGrants([id]).some((g) => g.at > ended)),
      );
      const refreshed = expectEachRefreshOnce([...SHORT, 'oauth-meta']);
      figures.push(`refreshes in all: ${refreshed}, every refresh token presented once, none refused`);
      await expectEachReadBack(async (id, now, was) => {
        // Top-level tokens as written; `raw` as CHANGELOG.md's upgrade notes say a 0.1.0 replica answers a connection stored in the new form.
        const { raw: _raw, [RAW_REFS]: _refs, ...top } = now.credentials;
        const { raw: _wasRaw, ...wasTop } = was.credentials;
        expect([id, top]).toEqual([id, wasTop]);
        // One stored in the new form by this release: its `raw` without the tokens, and `raw_refs` shown.
        if (id === 'oauth1-first' && RAW_REFS in (await stored('tumble', id)))
          expect([RAW_REFS in now.credentials, 'oauth_token' in (now.credentials.raw as object)]).toEqual([true, false]);
        expect([id, now.connection_config]).toEqual([id, id === ZOHO.id ? ZOHO.migrated : was.connection_config]);
      });
    },
    CASE_MS,
  );
});
