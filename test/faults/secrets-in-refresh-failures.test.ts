/**
 * Secrets in what a failed refresh leaves behind (#17): a token endpoint whose error answer quotes the
 * request it was sent — the body (refresh token, client secret, password, developer key) and the
 * Authorization header (HTTP Basic client credentials, an app's RS256 JWT) — as some providers and
 * WAF pages do. oidc-provider never quotes a request, so the token endpoints here are a hand-written
 * hostile peer on loopback (`startUpstream` with handlers below), one path per refresh strategy:
 *
 * - OAUTH2, client authentication `basic`: `400 invalid_grant` (the end user must re-authorize), asked
 *   by a forced fetch, by the proxy after the upstream's 401, and by the controller's schedule (which
 *   then marks the connection and sends the `refresh` webhook);
 * - OAUTH2, client authentication in the body: `401 invalid_client` (the Integration's client-fault
 *   annotation and its `ClientRejected` condition, never the connection);
 * - OAUTH2_CC: `400 temporarily_unavailable` (a transient failure);
 * - APP: the installation token endpoint answers `401` with a GitHub-style `message` quoting the JWT;
 * - TWO_STEP and BILL: `401`/`400` quoting the JSON body (their refresh never shows the answer; kept
 *   here so it stays that way).
 *
 * One replica (server, controller, webhook dispatcher) logs at `debug` into memory. Then every place
 * a refresh failure reaches is read and scanned for every secret value the test knows: the log lines,
 * the REST answers, the Connections (status, conditions), the Integrations (annotations, conditions),
 * the namespace's Events and ConfigMaps (operation log storage, webhook outbox), the operation log
 * through the API (`GET /logs` and `GET /logs/{id}` of each failure's `log_id`), and the webhooks
 * the receiver got.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { CLIENT_FAULT_ANNOTATION } from '../../src/auth/refresh/integration-fault.js';
import { GROUP, VERSION, type ConnectionResource, type IntegrationResource, type ProviderSpec } from '../../src/k8s/resources.js';
import { githubAppProviderSpec } from '../support/github-app-bed.js';
import { condition, readCustom } from '../support/kube.js';
import { captureLogs, needlesOf, writeScanResults, type LogCapture } from '../support/log-capture.js';
import { rawRequest } from '../support/proxy-bed.js';
import { startReplica, type Replica } from '../support/replica.js';
import { startUpstream, type Upstream } from '../support/servers/upstream.js';
import { webhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const suffix = randomBytes(3).toString('hex');
const random = (prefix: string) => `${prefix}-${randomBytes(20).toString('hex')}`;
/** Starts every quoted answer, so the test can see the provider's text did reach each place. */
const MARK = 'hostile-peer-quote';
const INSTALLATION = '42';
const APP_ID = '4242';

const P = {
  grant: `refreshscan-grant-${suffix}`,
  client: `refreshscan-client-${suffix}`,
  cc: `refreshscan-cc-${suffix}`,
  app: `refreshscan-app-${suffix}`,
  twoStep: `refreshscan-twostep-${suffix}`,
  bill: `refreshscan-bill-${suffix}`,
};
const CLIENTS = {
  grant: { clientId: `scan-grant-${suffix}`, clientSecret: random('grant-client-secret') },
  client: { clientId: `scan-client-${suffix}`, clientSecret: random('client-client-secret') },
  cc: { clientId: `scan-cc-${suffix}`, clientSecret: random('cc-client-secret') },
};
const appKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

/** Every secret value the test knows (value → kind). */
const secrets = new Map<string, string>();
function learn(kind: string, value: unknown): void {
  if (typeof value === 'string' && value.length >= 8 && !secrets.has(value)) secrets.set(value, kind);
}

let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let peer: Upstream;
let receiver: WebhookReceiver;
let logs: LogCapture;
let r: Replica;
/** Once true, the APP, TWO_STEP and BILL endpoints refuse (their imports exchange once first). */
let refusing = false;
/** What each refresh asked for was answered with (the REST and proxy answers are scanned too). */
const answers: Record<string, { status: number; body: unknown }> = {};

/** Body values a token request carries under these names are secrets. */
const SECRET_FIELDS = new Set([
  'refresh_token',
  'client_secret',
  'client_assertion',
  'code_verifier',
  'password',
  'secret',
  'devKey',
  'access_token',
]);

/** The values of a form or JSON body, in order (for the quote), learning the secret ones. */
function bodyValues(text: string): string[] {
  const out: string[] = [];
  const visit = (key: string, v: unknown) => {
    if (typeof v === 'string') {
      out.push(v);
      if (SECRET_FIELDS.has(key)) learn(`token request ${key}`, v);
    } else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) visit(k, x);
  };
  try {
    visit('', JSON.parse(text));
  } catch {
    for (const [k, v] of new URLSearchParams(text)) visit(k, v);
  }
  return out;
}

/**
 * What the hostile peer says: every value it was sent, bare, first (before any cut a client makes),
 * then the body as sent and the Authorization header, decoded when it is HTTP Basic; a JWT's
 * signature is quoted by itself too. Learns each secret it quotes.
 */
function quote(req: IncomingMessage, body: Buffer): string {
  const text = body.toString('utf8');
  const values = bodyValues(text);
  const auth = req.headers.authorization ?? '';
  const parts: string[] = [`${MARK}: cannot use ${values.join(' nor ')}`];
  if (auth) {
    const [scheme, credential = ''] = auth.split(' ');
    learn(`${scheme} credential`, credential);
    if (/^basic$/i.test(scheme!)) {
      // `client_id:client_secret`, each form-encoded: the secret is learnt (the client ID is not a secret).
      const decoded = Buffer.from(credential, 'base64').toString('utf8');
      learn('Basic password', decodeURIComponent(decoded.slice(decoded.indexOf(':') + 1)));
      parts.push(`the client ${decoded} is unknown`);
    }
    const signature = credential.split('.')[2];
    if (signature) {
      learn('JWT signature', signature);
      parts.push(`signature ${signature} does not verify`);
    }
  }
  parts.push(`you sent ${text}`, `with Authorization: ${auth}`);
  return parts.join('; ');
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

function hostilePeer(up: Upstream): void {
  up.on('/grant/token', (req, res, body) => json(res, 400, { error: 'invalid_grant', error_description: quote(req, body) }));
  up.on('/client/token', (req, res, body) => json(res, 401, { error: 'invalid_client', error_description: quote(req, body) }));
  // A 5xx is not read for an OAuth error (openid-client): a 400 with a transient OAuth error is.
  up.on('/cc/token', (req, res, body) => json(res, 400, { error: 'temporarily_unavailable', error_description: quote(req, body) }));
  // The upstream API of the `grant` provider: the stored access token is refused, so the proxy refreshes.
  up.on('/api401', (_req, res) => json(res, 401, { message: 'Bad credentials' }));
  up.on(`/app/installations/${INSTALLATION}`, (_req, res) =>
    json(res, 200, { id: Number(INSTALLATION), app_id: Number(APP_ID), account: { login: 'scan-org' } }),
  );
  up.on(`/app/installations/${INSTALLATION}/access_tokens`, (req, res, body) => {
    if (refusing) return json(res, 401, { message: quote(req, body), documentation_url: 'https://docs.example.test/rest' });
    const token = random('ghs');
    learn('APP installation token', token);
    json(res, 201, { token, expires_at: new Date(Date.now() + 3600_000).toISOString() });
  });
  up.on('/two-step/token', (req, res, body) => {
    if (refusing) return json(res, 401, { detail: quote(req, body) });
    bodyValues(body.toString('utf8'));
    const token = random('two-step-token');
    learn('TWO_STEP token', token);
    json(res, 200, { access_token: token, expires_in: 3600 });
  });
  up.on('/bill/login', (req, res, body) => {
    if (refusing) return json(res, 400, { message: quote(req, body) });
    bodyValues(body.toString('utf8'));
    const sessionId = random('bill-session');
    learn('BILL session', sessionId);
    json(res, 200, { sessionId, userId: 'scan-user' });
  });
}

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'refreshscan');
  [peer, receiver] = await Promise.all([startUpstream(), webhookReceiver()]);
  await receiver.listen();
  hostilePeer(peer);
  const o = peer.origin;
  const oauth2 = (path: string, auth: 'basic' | 'body'): ProviderSpec => ({
    displayName: `Refresh scan ${path}`,
    authMode: 'OAUTH2',
    authorizationUrl: `${o}/authorize`,
    tokenUrl: `${o}/${path}/token`,
    tokenRequestAuthMethod: auth,
    proxy: { baseUrl: `${o}/api401` },
  });
  await Promise.all([
    applyProvider(kc, P.grant, oauth2('grant', 'basic')),
    applyProvider(kc, P.client, oauth2('client', 'body')),
    applyProvider(kc, P.cc, { displayName: 'Refresh scan CC', authMode: 'OAUTH2_CC', tokenUrl: `${o}/cc/token`, proxy: { baseUrl: o } }),
    applyProvider(kc, P.app, githubAppProviderSpec(o, 'APP')),
    applyProvider(kc, P.twoStep, {
      displayName: 'Refresh scan two-step',
      authMode: 'TWO_STEP',
      twoStep: {
        tokenUrl: `${o}/two-step/token`,
        contentType: 'json',
        body: { identifier: '${credentials.username}', secret: '${credentials.password}' },
        credentialFields: [{ name: 'username', secret: false }, { name: 'password' }],
        tokenPath: 'access_token',
        expiresInPath: 'expires_in',
      },
      proxy: { baseUrl: o },
    } as ProviderSpec),
    applyProvider(kc, P.bill, { displayName: 'Refresh scan bill', authMode: 'BILL', tokenUrl: `${o}/bill/login`, proxy: { baseUrl: o } }),
  ]);
  env = await createEnvironment(kc, ns.name, { webhooks: { url: receiver.url } });
  await Promise.all([
    createIntegration(kc, ns.name, 'grant', { provider: P.grant }, CLIENTS.grant),
    createIntegration(kc, ns.name, 'client', { provider: P.client }, CLIENTS.client),
    createIntegration(kc, ns.name, 'cc', { provider: P.cc }, CLIENTS.cc),
    createIntegration(kc, ns.name, 'app', { provider: P.app }, { appId: APP_ID, privateKey: appKey, appLink: `${o}/apps/scan-app` }),
    createIntegration(kc, ns.name, 'twostep', { provider: P.twoStep }),
    createIntegration(kc, ns.name, 'bill', { provider: P.bill }),
  ]);
  for (const c of Object.values(CLIENTS)) learn('Integration client secret', c.clientSecret);
  // The private key itself, by its lines (a PEM's first and last lines are the same for every key).
  for (const line of appKey.split('\n').filter((l) => l && !l.startsWith('-----'))) learn('APP private key (a line)', line);
  learn('environment secret key', env.secretKey);
  learn('webhook signing key', env.webhookSigningKey);
  logs = captureLogs();
  r = await startReplica(kc, {
    namespaces: [ns.name],
    components: ['server', 'controller', 'webhooks'],
    config: { leaderElection: false },
    key: env.secretKey,
    logger: logs.logger,
  });
  await eventually(
    () =>
      r.ctx.catalog.listEnvironments(ns.name).length > 0 &&
      Object.values(P).every((p) => r.ctx.catalog.getProvider(p)) &&
      ['grant', 'client', 'cc', 'app', 'twostep', 'bill'].every((i) => r.ctx.catalog.getIntegration(ns.name, i)) &&
      ['grant-client', 'client-client', 'cc-client', 'app-client'].every((s) => r.ctx.catalog.getReferencedSecret(ns.name, s)),
    60_000,
  );
}, 180_000);

afterAll(async () => {
  await r?.stop();
  await Promise.all([peer?.close(), receiver?.close()]);
  await Promise.all(Object.values(P).map((p) => deleteProvider(kc, p)));
  await ns?.delete();
});

/** Imported credential fields that are not secrets. */
const NOT_SECRET = new Set(['type', 'expires_at', 'username', 'client_id', 'installation_id', 'organization_id']);

async function importConnection(integration: string, connectionId: string, credentials: Record<string, unknown>): Promise<void> {
  for (const [k, v] of Object.entries(credentials)) if (!NOT_SECRET.has(k)) learn(`imported ${k}`, v);
  const res = await r.call('POST', '/connections', {
    body: { provider_config_key: integration, connection_id: connectionId, credentials },
  });
  expect({ integration, status: res.status, body: res.body }).toMatchObject({ status: 201 });
  const stored = await eventually(() => r.ctx.connections.getConnection(ns.name, integration, connectionId));
  for (const [k, v] of Object.entries(stored.credentials))
    if (SECRET_FIELDS.has(k) || k === 'token' || k === 'session_id') learn(`stored ${k}`, v);
}

const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();
const oauth2Tokens = () => ({ type: 'OAUTH2', access_token: random('access'), refresh_token: random('refresh') });

async function forcedRefresh(integration: string, connectionId: string): Promise<number> {
  const res = await r.call('GET', `/connections/${connectionId}?provider_config_key=${integration}&force_refresh=true`);
  answers[`${integration}/${connectionId}`] = { status: res.status, body: res.body };
  return res.status;
}

const connectionsOf = async () =>
  (
    (await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'connections' })) as {
      items: ConnectionResource[];
    }
  ).items;

describe('secrets in what a refresh failure leaves behind', () => {
  it('a token endpoint quoting the request: no secret value in logs, status, Events, annotations, the operation log or answers', async () => {
    // Imports: APP, TWO_STEP and BILL exchange once at import (the peer still answers then).
    await importConnection('grant', 'g1', { ...oauth2Tokens(), expires_at: inAnHour() });
    await importConnection('grant', 'p1', { ...oauth2Tokens(), expires_at: inAnHour() });
    await importConnection('client', 'c1', { ...oauth2Tokens(), expires_at: inAnHour() });
    await importConnection('cc', 'cc1', {
      type: 'OAUTH2_CC',
      token: random('cc-token'),
      client_id: `scan-cc-own-${suffix}`,
      client_secret: random('cc-connection-secret'),
      expires_at: inAnHour(),
    });
    await importConnection('app', 'a1', { type: 'APP', installation_id: INSTALLATION });
    await importConnection('twostep', 't1', { type: 'TWO_STEP', username: 'scan-user', password: random('two-step-password') });
    await importConnection('bill', 'b1', {
      type: 'BILL',
      username: 'scan@example.test',
      password: random('bill-password'),
      organization_id: `org-${suffix}`,
      dev_key: random('bill-dev-key'),
    });
    refusing = true;

    // Forced fetches: each strategy's refresh meets the quoting peer.
    expect(await forcedRefresh('grant', 'g1')).toBe(424);
    expect(await forcedRefresh('client', 'c1')).toBe(503);
    expect([502, 503]).toContain(await forcedRefresh('cc', 'cc1'));
    expect(await forcedRefresh('app', 'a1')).toBe(424);
    expect(await forcedRefresh('twostep', 't1')).toBe(424);
    expect(await forcedRefresh('bill', 'b1')).toBe(424);

    // The proxy: the upstream refuses the stored token, the proxy's forced refresh meets the peer, the 401 goes back.
    const proxied = await rawRequest(r.server!.port, {
      path: '/proxy/user',
      headers: { authorization: `Bearer ${env.secretKey}`, 'connection-id': 'p1', 'provider-config-key': 'grant' },
    });
    answers['proxy grant/p1'] = { status: proxied.status, body: proxied.body.toString('utf8') };
    expect(proxied.status).toBe(401);

    // The controller's schedule: a token about to expire is refreshed at once; the refusal marks the
    // connection for re-authorization and sends the `refresh` webhook with the provider's answer.
    await importConnection('grant', 's1', { ...oauth2Tokens(), expires_at: new Date(Date.now() + 120_000).toISOString() });
    await eventually(() => receiver.received.some((w) => w.json.connectionId === 's1' && w.json.operation === 'refresh'), 60_000, 200);
    // The Integration reconciler turns the client-fault annotation into its condition; the connection's follows.
    await eventually(
      async () =>
        condition(await readCustom<IntegrationResource>(kc, 'integrations', ns.name, 'client'), 'Ready')?.reason === 'ClientRejected',
      30_000,
      200,
    );
    await eventually(
      async () =>
        condition(await readCustom<ConnectionResource>(kc, 'connections', ns.name, connectionName('client', 'c1')), 'IntegrationReady')
          ?.status === 'False',
      30_000,
      200,
    );

    // Everything a failure reaches, read back from where it is kept.
    const texts: Array<{ where: string; text: string }> = [];
    const add = (where: string, value: unknown) => texts.push({ where, text: typeof value === 'string' ? value : JSON.stringify(value) });
    for (const [k, v] of Object.entries(answers)) add(`answer ${k}`, v);
    const connections = await connectionsOf();
    for (const c of connections) add(`Connection ${c.metadata.name}`, c);
    const integrations = (
      (await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'integrations' })) as {
        items: IntegrationResource[];
      }
    ).items;
    for (const i of integrations) add(`Integration ${i.metadata.name}`, i);
    const events = (await core.listNamespacedEvent({ namespace: ns.name })).items;
    for (const e of events) add(`Event ${e.reason} ${e.involvedObject.name}`, e);
    await r.ctx.oplog?.flush();
    for (const cm of (await core.listNamespacedConfigMap({ namespace: ns.name })).items) add(`ConfigMap ${cm.metadata?.name}`, cm);
    const listed = await r.call('GET', '/logs?limit=500');
    expect(listed.status).toBe(200);
    add('GET /logs', listed.body);
    const logIds = [...new Set(connections.flatMap((c) => (c.status?.errors ?? []).map((e) => e.logId)).filter(Boolean))];
    const entries: Record<string, any> = {};
    for (const id of logIds) {
      const entry = await r.call('GET', `/logs/${id}`);
      if (entry.status === 200) entries[id!] = entry.body;
      add(`GET /logs/${id}`, entry.body);
    }
    for (const w of receiver.received) add(`webhook ${String(w.json.operation)} ${String(w.json.connectionId)}`, w.body);

    // The provider's answer did reach each place (so the scan looks at its text, not at nothing).
    const byName = (integration: string, id: string) => connections.find((c) => c.metadata.name === connectionName(integration, id));
    const lastError = (integration: string, id: string) => byName(integration, id)?.status?.errors?.at(-1);
    const reached: Record<string, boolean> = {};
    for (const [integration, id] of [
      ['grant', 'g1'],
      ['grant', 'p1'],
      ['cc', 'cc1'],
      ['app', 'a1'],
    ] as const) {
      const error = lastError(integration, id);
      reached[`${integration}/${id} status error`] = Boolean(error?.message?.includes(MARK));
      reached[`${integration}/${id} GET /logs/{id}`] = Boolean(entries[error?.logId ?? '']?.messages?.join(' ').includes(MARK));
      reached[`${integration}/${id} Event`] = events.some(
        (e) => e.involvedObject.name === connectionName(integration, id) && Boolean(e.message?.includes(MARK)),
      );
    }
    reached['twostep/t1 status error'] = lastError('twostep', 't1')?.message !== undefined;
    reached['bill/b1 status error'] = lastError('bill', 'b1')?.message !== undefined;
    const clientIntegration = integrations.find((i) => i.metadata.name === 'client');
    reached['client-fault annotation'] = Boolean(clientIntegration?.metadata.annotations?.[CLIENT_FAULT_ANNOTATION]?.includes(MARK));
    reached['ClientRejected condition'] = Boolean(condition(clientIntegration, 'Ready')?.message?.includes(MARK));
    reached['refresh webhook'] = receiver.received.some((w) => w.json.connectionId === 's1' && w.body.includes(MARK));
    const logged = (msg: string) => logs.lines.some((l) => l.includes(`"msg":"${msg}"`) && l.includes(MARK));
    reached['token refresh failed line'] = logged('token refresh failed');
    reached['integration fault line'] = logged('token refresh refused because of the integration');
    reached['proxy refresh line'] = logged('refresh after a 401 from the provider failed');

    // The scan: each value as it is, URL-encoded, JSON-escaped, and a long one by its first and last 16 characters.
    const needles = needlesOf(secrets, { prefixes: true });
    const leaks = [
      ...logs.leaks(needles.keys()).map((l) => ({ where: 'log line', needle: l.secret, text: l.line })),
      ...texts.flatMap((t) =>
        [...needles.keys()].filter((n) => t.text.includes(n)).map((needle) => ({ where: t.where, needle, text: t.text })),
      ),
    ].map((l) => `${needles.get(l.needle)} ${l.needle.slice(0, 6)}… in ${l.where}: ${excerpt(l.text, l.needle)}`);
    writeScanResults('secrets-in-refresh-failures', logs, secrets, {
      otherTexts: texts.length,
      events: events.length,
      oplogEntries: (listed.body.logs as unknown[]).length,
      webhooks: receiver.received.length,
      reached,
      leaks,
    });
    expect(leaks).toEqual([]);
    expect(Object.entries(reached).filter(([, yes]) => !yes)).toEqual([]);
  }, 240_000);
});

function connectionName(integration: string, connectionId: string): string {
  return r.ctx.connections.getConnection(ns.name, integration, connectionId)!.resource.metadata.name;
}

/** The text around a found value, for the report of a leak. */
function excerpt(text: string, needle: string): string {
  const at = text.indexOf(needle);
  return text.slice(Math.max(0, at - 200), at + needle.length + 100);
}
