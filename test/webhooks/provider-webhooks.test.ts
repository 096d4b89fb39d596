/**
 * Provider webhooks end to end: a simulated provider (test/support/provider-simulators.ts) signs an
 * event as its docs describe and sends it to Latchkey's public endpoint; the application's receiver
 * gets exactly one signed `forward` delivery naming the matching connection. Tampered, replayed and
 * unsigned events are refused and never stored, so never forwarded; handshakes answer as documented.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { ProviderWebhookReceiver, type ForwardWebhookBody } from '../../src/webhooks/provider-events.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, loadAllYaml } from '@kubernetes/client-node';
import { WebhookOutbox } from '../../src/k8s/webhook-outbox.js';
import { HandshakeWindows, handshakeSecrets, MAX_HANDSHAKE_SECRETS } from '../../src/k8s/handshake-windows.js';
import { GROUP, VERSION, type ProviderSpec } from '../../src/k8s/resources.js';
import { IntegrationReconciler } from '../../src/controller/reconcilers/integration.js';
import { integrationsView } from '../../src/http/dashboard/views.js';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { catalogSpec } from '../support/catalog-files.js';
import { REPO_ROOT } from '../../dev/control-plane.js';
import {
  ASANA,
  asanaApi,
  SIMULATORS,
  tampered,
  unsigned,
  type ProviderSimulator,
  type SimulatedRequest,
} from '../support/provider-simulators.js';
import { startReplica, type Replica } from '../support/replica.js';
import { signatureValid, webhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/servers/webhook-receiver.js';

const kc = testKubeConfig();
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let receiver: WebhookReceiver;
let replica: Replica;
/** Cluster-scoped Providers: named for this file, so parallel files do not share them. */
const providerName = (p: string) => `pwh-${p}`;
const integrationOf = (p: string) => `${p}-events`;
const PROVIDERS = [...new Set(Object.values(SIMULATORS).map((s) => s.provider))];

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'provider-webhooks');
  receiver = await webhookReceiver();
  await receiver.listen();
  env = await createEnvironment(kc, ns.name, { webhooks: { url: receiver.url }, api: { integrationWrites: true } });
  for (const provider of PROVIDERS) {
    // Simulators of one provider (Jira's admin and OAuth app webhooks) share its Integration and Secret.
    const client: Record<string, string> = { clientId: 'client-id', clientSecret: 'not-the-webhook-secret' };
    for (const sim of Object.values(SIMULATORS).filter((s) => s.provider === provider))
      client[sim.secretKey === 'clientSecret' ? 'clientSecret' : (sim.storedAs ?? 'webhookSecret')] = sim.secret;
    await applyProvider(kc, providerName(provider), catalogSpec(provider));
    await createIntegration(kc, ns.name, integrationOf(provider), { provider: providerName(provider) }, client);
  }
  replica = await startReplica(kc, { namespaces: [ns.name], components: ['server', 'webhooks'], webhookPollMs: 100, selfBaseUrl: true });
  const store = replica.ctx.store;
  await eventually(
    () =>
      store.readSecretValue(ns.name, `${env.name}-keys`, 'webhookSigningKey') &&
      Object.values(SIMULATORS).every(
        (s) => store.getProvider(providerName(s.provider)) && store.getIntegration(ns.name, integrationOf(s.provider)),
      ),
  );
}, 60_000);

afterAll(async () => {
  await replica?.stop();
  await receiver.close();
  for (const provider of PROVIDERS) await deleteProvider(kc, providerName(provider));
  await ns.delete();
});

const pathOf = (sim: ProviderSimulator) => `/webhooks/${ns.name}/${integrationOf(sim.provider)}`;

async function send(r: SimulatedRequest): Promise<{ status: number; text: string; contentType: string | null }> {
  const res = await fetch(r.url, { method: r.method, headers: r.headers, body: r.body });
  return { status: res.status, text: await res.text(), contentType: res.headers.get('content-type') };
}

/** A signed request for the replica's public URL of the simulator's Integration. */
const signed = (sim: ProviderSimulator, body = sim.event(), nowMs = Date.now()) => sim.sign(body, nowMs, `${replica.url}${pathOf(sim)}`);

/** Forward deliveries the receiver got for this integration. */
const forwardsFor = (sim: ProviderSimulator): ReceivedWebhook[] =>
  receiver.delivered().filter((w) => w.json.type === 'forward' && w.json.providerConfigKey === integrationOf(sim.provider));

async function connect(sim: ProviderSimulator, connectionId: string): Promise<void> {
  await replica.ctx.store.createConnection({
    namespace: ns.name,
    spec: {
      integration: integrationOf(sim.provider),
      provider: providerName(sim.provider),
      connectionId,
      authMode: catalogSpec(sim.provider).authMode,
      endUser: { id: `user-of-${connectionId}`, tags: { plan: 'pro' } },
      connectionConfig: sim.account ? { [sim.account.key]: sim.account.value } : {},
    },
    credentials: { type: 'API_KEY', apiKey: 'unused' },
  });
}

describe.each(Object.keys(SIMULATORS))('%s', (name) => {
  const sim = SIMULATORS[name]!;
  const connectionId = `conn-${name}-${randomUUID().slice(0, 6)}`;

  beforeAll(async () => {
    await connect(sim, connectionId);
    // Another connection of the same Integration with another account: never named.
    if (sim.account) {
      await replica.ctx.store.createConnection({
        namespace: ns.name,
        spec: {
          integration: integrationOf(sim.provider),
          provider: providerName(sim.provider),
          connectionId: `${connectionId}-other`,
          authMode: catalogSpec(sim.provider).authMode,
          connectionConfig: { [sim.account.key]: '999' },
        },
        credentials: { type: 'API_KEY', apiKey: 'unused' },
      });
    }
    await eventually(() => replica.ctx.store.getConnection(ns.name, integrationOf(sim.provider), connectionId));
  });

  it('refuses a tampered, an unsigned and (where signed) a replayed event with 401, and forwards only the genuine one, once, to its connection', async () => {
    const before = forwardsFor(sim).length;
    const genuine = signed(sim);
    const changed = tampered(sim, genuine);
    expect(changed).not.toEqual(genuine);
    const bare = unsigned(sim, genuine);
    const refused = [changed, bare, ...(sim.signsTime ? [signed(sim, sim.event(), Date.now() - 10 * 60_000)] : [])];
    for (const r of refused) {
      const answer = await send(r);
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.text)).toEqual({
        error: { code: 'invalid_signature', message: 'The webhook signature could not be verified.' },
      });
    }
    // Refused requests are never stored: the outbox holds nothing for this integration.
    const pending = await new WebhookOutbox(kc).list([ns.name]);
    expect(pending.filter((d) => (JSON.parse(d.body) as ForwardWebhookBody).providerConfigKey === integrationOf(sim.provider))).toEqual([]);

    expect((await send(genuine)).status).toBe(200);
    const [forward] = await eventually(() => (forwardsFor(sim).length > before ? forwardsFor(sim).slice(before) : undefined));
    expect(signatureValid(env.webhookSigningKey, forward!)).toBe(true);
    const body = forward!.json as unknown as ForwardWebhookBody;
    expect(body).toMatchObject({
      from: providerName(sim.provider),
      type: 'forward',
      provider: providerName(sim.provider),
      providerConfigKey: integrationOf(sim.provider),
      environment: env.name,
      payload: JSON.parse(genuine.body),
    });
    if (sim.account) {
      expect(body.connectionId).toBe(connectionId);
      expect(body.connections).toEqual([{ connectionId, endUser: { endUserId: `user-of-${connectionId}`, tags: { plan: 'pro' } } }]);
    } else {
      expect(body.connections).toEqual([]);
    }
    // Exactly one: nothing of the refused ones came after it (they were never stored).
    await eventually(async () => (await new WebhookOutbox(kc).list([ns.name])).length === 0);
    expect(forwardsFor(sim).length).toBe(before + 1);
  });
});

it('GitHub: a redelivery with the same X-GitHub-Delivery is answered 200 and not forwarded again', async () => {
  const sim = SIMULATORS['github-app']!;
  const before = forwardsFor(sim).length;
  const first = signed(sim);
  expect((await send(first)).status).toBe(200);
  expect((await send(first)).status).toBe(200);
  await eventually(() => forwardsFor(sim).length === before + 1);
  // A later, different delivery arrives: the duplicate, stored before it if at all, would have too.
  expect((await send(signed(sim))).status).toBe(200);
  await eventually(() => forwardsFor(sim).length === before + 2);
  const ids = forwardsFor(sim)
    .slice(before)
    .map((w) => (w.json as unknown as ForwardWebhookBody).deliveryId);
  expect(ids).toEqual([first.headers['x-github-delivery'], expect.any(String)]);
  expect(ids[1]).not.toBe(ids[0]);
});

it('Slack: url_verification, signed, is answered with the challenge as text/plain and not forwarded; unsigned it is refused', async () => {
  const sim = SIMULATORS.slack!;
  const before = forwardsFor(sim).length;
  const body = JSON.stringify({
    token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl',
    challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
    type: 'url_verification',
  });
  const answer = await send(signed(sim, body));
  expect(answer).toEqual({
    status: 200,
    text: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
    contentType: 'text/plain; charset=utf-8',
  });
  const unsigned = signed(sim, body);
  delete unsigned.headers['x-slack-signature'];
  expect((await send(unsigned)).status).toBe(401);
  expect(forwardsFor(sim).length).toBe(before);
});

it('Zoom: endpoint.url_validation, signed, is answered with plainToken and its HMAC as encryptedToken', async () => {
  const sim = SIMULATORS.zoom!;
  const body = JSON.stringify({
    payload: { plainToken: 'qgg8vlvZRS6UYooatFL8Aw' },
    event_ts: 1654503849680,
    event: 'endpoint.url_validation',
  });
  const answer = await send(signed(sim, body));
  expect(answer.status).toBe(200);
  expect(JSON.parse(answer.text)).toEqual({
    plainToken: 'qgg8vlvZRS6UYooatFL8Aw',
    encryptedToken: createHmac('sha256', sim.secret).update('qgg8vlvZRS6UYooatFL8Aw').digest('hex'),
  });
  expect((await send(tampered(sim, signed(sim, body)))).status).toBe(401);
});

it('Microsoft Graph: the subscription validation request is answered with the validationToken as text/plain', async () => {
  const sim = SIMULATORS.outlook!;
  const res = await fetch(
    `${replica.url}${pathOf(sim)}?validationToken=${encodeURIComponent('Validation: Testing client application reachability')}`,
    {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
    },
  );
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  expect(await res.text()).toBe('Validation: Testing client application reachability');
});

it('GET /integrations/{id}?include=webhook shows the public URL the events above were sent to, and forward_webhooks', async () => {
  const sim = SIMULATORS.shopify!;
  const res = await replica.call('GET', `/integrations/${integrationOf(sim.provider)}?include=webhook`, { key: env.secretKey });
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({ forward_webhooks: true, webhook_url: `${replica.url}${pathOf(sim)}` });
  expect((await send(sim.sign(sim.event(), Date.now(), res.body.data.webhook_url))).status).toBe(200);
});

it('the Integration reconciler writes status.webhookUrl (the -o wide column) for a Provider with webhooks, and none without', async () => {
  const base = 'https://latchkey.example.com';
  const reconciler = new IntegrationReconciler(replica.ctx.store, replica.ctx.clock, base);
  await createIntegration(kc, ns.name, 'no-webhooks', { provider: 'pwh-none' });
  await applyProvider(kc, 'pwh-none', { displayName: 'None', authMode: 'API_KEY' });
  await eventually(() => replica.ctx.store.getIntegration(ns.name, 'no-webhooks') && replica.ctx.store.getProvider('pwh-none'));
  await reconciler.reconcile(ns.name, integrationOf('github-app'));
  await reconciler.reconcile(ns.name, 'no-webhooks');
  const custom = kc.makeApiClient(CustomObjectsApi);
  const statusOf = async (name: string) =>
    (
      (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'integrations', name })) as {
        status?: { webhookUrl?: string; conditions?: unknown[] };
      }
    ).status;
  expect((await statusOf(integrationOf('github-app')))?.webhookUrl).toBe(`${base}/webhooks/${ns.name}/${integrationOf('github-app')}`);
  const none = await statusOf('no-webhooks');
  expect(none?.conditions?.length).toBeGreaterThan(0);
  expect(none).not.toHaveProperty('webhookUrl');
  const crd = loadAllYaml(readFileSync(join(REPO_ROOT, 'crds/latchkey.dev_integrations.yaml'), 'utf8'))[0] as {
    spec: { versions: Array<{ additionalPrinterColumns: Array<{ jsonPath: string; priority?: number }> }> };
  };
  expect(crd.spec.versions[0]!.additionalPrinterColumns).toContainEqual(
    expect.objectContaining({ jsonPath: '.status.webhookUrl', priority: 1 }),
  );
  await deleteProvider(kc, 'pwh-none');
});

it('the dashboard lists the webhook URL of integrations whose Provider declares webhooks', async () => {
  const rows = await integrationsView(replica.ctx.store, ns.name, 'https://latchkey.example.com');
  const row = (id: string) => rows.find((r) => r.id === id);
  expect(row(integrationOf('slack'))?.webhook_url).toBe(`https://latchkey.example.com/webhooks/${ns.name}/${integrationOf('slack')}`);
  expect(row('no-webhooks')?.webhook_url).toBeNull();
});

it('a receiver outage loses nothing: the forward is retried with the same webhook-id until it is taken', async () => {
  const sim = SIMULATORS.typeform!;
  const before = forwardsFor(sim).length;
  receiver.answers.push({ status: 503 }, { status: 503 });
  expect((await send(signed(sim))).status).toBe(200);
  const [taken] = await eventually(() => (forwardsFor(sim).length > before ? forwardsFor(sim).slice(before) : undefined));
  const attempts = receiver.received.filter((w) => w.json.type === 'forward' && w.headers['webhook-id'] === taken!.headers['webhook-id']);
  expect(attempts.map((w) => w.status)).toEqual([503, 503, 200]);
});

it('the Provider CRD refuses a webhooks block the engine could not interpret', async () => {
  const base: ProviderSpec = { displayName: 'Bad', authMode: 'API_KEY' };
  const refusal = async (webhooks: unknown) => {
    try {
      await kc.makeApiClient(CustomObjectsApi).createClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: 'providers',
        body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Provider', metadata: { name: 'pwh-invalid' }, spec: { ...base, webhooks } },
      });
      return 'accepted';
    } catch (err) {
      return String((err as { body?: unknown }).body ?? err);
    }
  };
  expect(await refusal({ signature: { scheme: 'hmac-sha256' } })).toContain('hmac-sha256 and hmac-sha1 need header');
  expect(await refusal({ signature: { scheme: 'hmac-sha256', header: 'x-sig', signedContent: '{secret}{body}' } })).toContain(
    'signedContent may use',
  );
  expect(await refusal({ signature: { scheme: 'client-state' } })).toContain('client-state needs bodyPath');
  expect(
    await refusal({ signature: { scheme: 'hmac-sha256', header: 'x-hook-signature' }, handshake: { type: 'asana-hook-secret' } }),
  ).toContain('asana-hook-secret needs opensOn');
  expect(await refusal({ signature: { scheme: 'stripe' }, deliveryId: { header: 'x-id', bodyPath: 'id' } })).toContain(
    'deliveryId needs exactly one of header and bodyPath',
  );
  expect(await refusal({ signature: { scheme: 'md5', header: 'x' } })).toContain('Unsupported value');
  expect(await refusal({ signature: { scheme: 'hmac-sha256', header: 'x-sig', signedContent: 'v0:{header:x-ts}:{body}' } })).toBe(
    'accepted',
  );
  await deleteProvider(kc, 'pwh-invalid');
});

it('answers 503 (the provider retries), not 500, when the event cannot be stored, and takes the retry once storage is back', async () => {
  const sim = SIMULATORS['github-app']!;
  let down = true;
  const real = new WebhookOutbox(kc);
  const receiverOf = new ProviderWebhookReceiver({
    ...replica.ctx,
    outbox: {
      enqueue: (...args: Parameters<WebhookOutbox['enqueue']>) =>
        down ? Promise.reject(new Error('etcd unavailable')) : real.enqueue(...args),
    },
  });
  const target = receiverOf.target(ns.name, integrationOf(sim.provider))!;
  const r = signed(sim);
  const request = () =>
    receiverOf.receive(target, {
      method: 'POST',
      url: r.url,
      headers: r.headers,
      body: Buffer.from(r.body),
      json: JSON.parse(r.body),
      query: new URLSearchParams(),
    });
  expect(await request()).toMatchObject({ status: 503 });
  // The duplicate marker's write failing is a 503 too (the receive would otherwise reject: a 500).
  const noMarkers = new ProviderWebhookReceiver({
    ...replica.ctx,
    markers: { markUsed: () => Promise.reject(new Error('etcd unavailable')), unmarkUsed: () => Promise.resolve() },
  });
  expect(
    await noMarkers.receive(target, {
      method: 'POST',
      url: r.url,
      headers: r.headers,
      body: Buffer.from(r.body),
      json: JSON.parse(r.body),
      query: new URLSearchParams(),
    }),
  ).toMatchObject({
    status: 503,
    body: JSON.stringify({ error: { code: 'unavailable', message: 'The webhook could not be stored; retry later.' } }),
  });
  down = false;
  // The failed attempt took its duplicate marker back: the provider's retry of the same delivery is stored.
  expect(await request()).toMatchObject({ status: 200 });
  await eventually(() =>
    forwardsFor(sim).some((w) => (w.json as unknown as ForwardWebhookBody).deliveryId === r.headers['x-github-delivery']),
  );
});

it("an integration created through the API with Nango's credentials.webhook_secret verifies its provider's webhooks with it", async () => {
  const sim = SIMULATORS.slack!;
  const created = await replica.call('POST', '/integrations', {
    key: env.secretKey,
    body: {
      provider: providerName('slack'),
      unique_key: 'slack-via-api',
      credentials: { type: 'OAUTH2', client_id: 'id', client_secret: 'client-secret', webhook_secret: sim.secret },
    },
  });
  expect(created.status).toBeLessThan(300);
  const shown = await replica.call('GET', '/integrations/slack-via-api?include=credentials', { key: env.secretKey });
  expect(shown.body.data.credentials).toMatchObject({ client_secret: 'client-secret', webhook_secret: sim.secret });
  const url = `${replica.url}/webhooks/${ns.name}/slack-via-api`;
  // Answered 200 once the Integration and its Secret are in the server's cache (404, then 401, before).
  await eventually(async () => (await send(sim.sign(sim.event(), Date.now(), url))).status === 200);
  expect((await send(tampered(sim, sim.sign(sim.event(), Date.now(), url)))).status).toBe(401);
});

it('spends a per-integration budget: 429 with Retry-After past it, forgeries on a budget of their own', async () => {
  const sim = SIMULATORS.typeform!;
  const budgeted = new ProviderWebhookReceiver({ ...replica.ctx, config: { ...replica.ctx.config, providerWebhookRatePerIntegration: 2 } });
  const target = budgeted.target(ns.name, integrationOf(sim.provider))!;
  const receive = (r: SimulatedRequest) =>
    budgeted.receive(target, {
      method: 'POST',
      url: r.url,
      headers: r.headers,
      body: Buffer.from(r.body),
      json: JSON.parse(r.body),
      query: new URLSearchParams(),
    });
  const forged = () => tampered(sim, signed(sim));
  expect((await receive(forged())).status).toBe(401);
  expect((await receive(forged())).status).toBe(401);
  expect(await receive(forged())).toMatchObject({ status: 429, headers: { 'retry-after': expect.stringMatching(/^[1-9]\d*$/) } });
  // The forgeries spent their own budget, not the provider's.
  expect((await receive(signed(sim))).status).toBe(200);
  expect((await receive(signed(sim))).status).toBe(200);
  expect(await receive(signed(sim))).toMatchObject({ status: 429, body: expect.stringContaining('rate_limited') });
});

it('answers 200 and forwards nothing (logged as dropped) while the Environment has no webhook URL', async () => {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const ref = { group: GROUP, version: VERSION, namespace: ns.name, plural: 'environments', name: env.name };
  const setUrl = async (url: string | undefined) => {
    const current = (await custom.getNamespacedCustomObject(ref)) as { spec: { webhooks?: { url?: string } } };
    await custom.replaceNamespacedCustomObject({ ...ref, body: { ...current, spec: { ...current.spec, webhooks: url ? { url } : {} } } });
    await eventually(() => (replica.ctx.store.listEnvironments(ns.name)[0]?.spec.webhooks?.url ?? '') === (url ?? ''));
  };
  const sim = SIMULATORS.zendesk!;
  const dropped = async () =>
    metricSample(await replica.ctx.metrics.getSingleMetricAsString('latchkey_provider_webhooks_total'), providerName('zendesk'), 'dropped');
  await setUrl(undefined);
  try {
    const before = await dropped();
    expect((await send(signed(sim))).status).toBe(200);
    expect(await dropped()).toBe(before + 1);
    const pending = await new WebhookOutbox(kc).list([ns.name]);
    expect(pending.filter((d) => (JSON.parse(d.body) as ForwardWebhookBody).providerConfigKey === integrationOf('zendesk'))).toEqual([]);
  } finally {
    await setUrl(receiver.url);
  }
});

function metricSample(page: string, provider: string, outcome: string): number {
  const line = page.split('\n').find((l) => l.startsWith(`latchkey_provider_webhooks_total{provider="${provider}",outcome="${outcome}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

it('answers 404 for an integration that is not there, 405 for another method, 413 past the provider limit', async () => {
  const sim = SIMULATORS.github!;
  expect((await send({ ...signed(sim), url: `${replica.url}/webhooks/${ns.name}/nope` })).status).toBe(404);
  const get = await fetch(`${replica.url}${pathOf(sim)}`);
  expect(get.status).toBe(405);
  expect(get.headers.get('allow')).toBe('HEAD, POST');
  // Intercom checks the URL with HEAD before it sends.
  expect((await fetch(`${replica.url}${pathOf(SIMULATORS.intercom!)}`, { method: 'HEAD' })).status).toBe(200);
  expect((await fetch(`${replica.url}/webhooks/${ns.name}/nope`, { method: 'HEAD' })).status).toBe(404);
  const big = await send(signed(SIMULATORS.slack!, JSON.stringify({ team_id: 'T1DC2JH3J', pad: 'x'.repeat(600 * 1024) })));
  expect(big.status).toBe(413);
});

it('keeps every received event in the operation log, and counts them by provider and outcome', async () => {
  const metrics = await replica.ctx.metrics.getSingleMetricAsString('latchkey_provider_webhooks_total');
  expect(metrics).toContain(`latchkey_provider_webhooks_total{provider="${providerName('stripe')}",outcome="forwarded"} 1`);
  expect(metrics).toContain(`latchkey_provider_webhooks_total{provider="${providerName('stripe')}",outcome="unverified"} 3`);
  expect(metrics).toContain(`latchkey_provider_webhooks_total{provider="${providerName('github-app')}",outcome="duplicate"} 1`);
  const stripeLog = async () => {
    const logs = await replica.call('GET', `/logs?integration=${integrationOf('stripe')}`, { key: env.secretKey });
    expect(logs.status).toBe(200);
    return (logs.body.logs as Array<{ messages: string[] }>).flatMap((e) => e.messages).join('\n');
  };
  // The log is written in batches: both entries are there once the batch is.
  const messages = await eventually(async () => {
    const text = await stripeLog();
    return text.includes('refused') && text.includes('forwarded as') ? text : undefined;
  });
  expect(messages).toContain('pwh-stripe webhook refused: the signature does not match.');
  expect(messages).toMatch(/webhook evt_\w+ verified, routed to conn-stripe-[\w-]+ \(account acct_1032D82eZvKYlo2C\); forwarded as msg_/);
  expect(messages).not.toContain(SIMULATORS.stripe!.secret);
});

describe('Asana: the X-Hook-Secret handshake, taken only inside a webhook creation proxied through Latchkey', () => {
  const integration = integrationOf('asana');
  const creator = 'conn-asana-creator';
  let asana: Awaited<ReturnType<typeof asanaApi>>;
  /** A second server replica: the handshake reaches it while the creation goes through the first one. */
  let other: Replica;
  const secretKeys = async () =>
    Object.keys((await kc.makeApiClient(CoreV1Api).readNamespacedSecret({ namespace: ns.name, name: `${integration}-client` })).data ?? {});
  const target = () => `${other.url}/webhooks/${ns.name}/${integration}`;
  const forwards = () => receiver.delivered().filter((w) => w.json.type === 'forward' && w.json.providerConfigKey === integration);
  /** `POST /webhooks` to Asana through the first replica's proxy, as the application calls it. */
  const createWebhook = (connectionId = creator) =>
    fetch(`${replica.url}/proxy/webhooks`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${env.secretKey}`,
        'connection-id': connectionId,
        'provider-config-key': integration,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ resource: '8675309', target: target() }).toString(),
    });

  beforeAll(async () => {
    asana = await asanaApi();
    const spec = catalogSpec('asana');
    await applyProvider(kc, providerName('asana'), { ...spec, proxy: { ...spec.proxy, baseUrl: asana.url } });
    await createIntegration(
      kc,
      ns.name,
      integration,
      { provider: providerName('asana') },
      { clientId: 'id', clientSecret: 'asana-client-secret' },
    );
    other = await startReplica(kc, { namespaces: [ns.name], components: ['server'], selfBaseUrl: true });
    for (const id of [creator, `${creator}-other`])
      await replica.ctx.store.createConnection({
        namespace: ns.name,
        spec: {
          integration,
          provider: providerName('asana'),
          connectionId: id,
          authMode: 'OAUTH2',
          endUser: { id: `user-of-${id}`, tags: {} },
          connectionConfig: {},
        },
        credentials: { type: 'OAUTH2', access_token: `token-of-${id}` },
      });
    await eventually(() =>
      [replica, other].every(
        (r) =>
          r.ctx.store.getConnection(ns.name, integration, creator) && r.ctx.store.getReferencedSecret(ns.name, `${integration}-client`),
      ),
    );
  }, 60_000);

  afterAll(async () => {
    await other?.stop();
    await asana?.close();
    await deleteProvider(kc, providerName('asana'));
  });

  it('refuses a handshake outside a creation window with 401 and stores nothing; an event signed with its secret is refused', async () => {
    const secret = 'b537207f20cbfa02357cf448134da559e8bd39d61597dcd5631b8012eae53e81';
    const answer = await send(ASANA.handshake(target(), secret));
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.text)).toEqual({
      error: { code: 'handshake_refused', message: 'No webhook creation of this integration is in flight through Latchkey.' },
    });
    expect((await secretKeys()).filter((k) => k !== 'clientId' && k !== 'clientSecret')).toEqual([]);
    expect((await send(ASANA.sign(ASANA.event(), secret, target()))).status).toBe(401);
    const logs = await eventually(async () => {
      const res = await replica.call('GET', `/logs?integration=${integration}`, { key: env.secretKey });
      const text = (res.body.logs as Array<{ messages: string[] }>).flatMap((e) => e.messages).join('\n');
      return text.includes('handshake refused') ? text : undefined;
    });
    expect(logs).not.toContain(secret);
  });

  it('a creation through one replica opens the window for the handshake another replica answers; its events go to the creating connection', async () => {
    const before = forwards().length;
    const created = await createWebhook();
    expect(created.status).toBe(201);
    const creation = asana.creations.at(-1)!;
    expect(creation).toMatchObject({ target: target(), handshakeStatus: 200, confirmed: true });
    // Kept once the proxied call ended: one handshake secret, and no window left open.
    await eventually(async () => (await secretKeys()).some((k) => k.startsWith('handshakeSecret.')));
    expect((await secretKeys()).filter((k) => k.startsWith('handshakeSecret.') || k === 'webhookHandshakeWindow')).toHaveLength(1);

    const genuine = ASANA.sign(ASANA.event(), creation.secret, target());
    // A heartbeat is answered and not forwarded (200 once this replica's cache has the kept secret).
    await eventually(async () => (await send(ASANA.sign(ASANA.heartbeat(), creation.secret, target()))).status === 200);
    // Refused: tampered with, unsigned, signed with another secret; a handshake now that the window is closed.
    expect((await send({ ...genuine, body: genuine.body.replace('"changed"', '"removed"') })).status).toBe(401);
    expect((await send({ ...genuine, headers: { 'content-type': 'application/json' } })).status).toBe(401);
    expect((await send(ASANA.sign(ASANA.event(), `${creation.secret.slice(1)}0`, target()))).status).toBe(401);
    expect((await send(ASANA.handshake(target(), 'f'.repeat(64)))).status).toBe(401);
    expect((await send(genuine)).status).toBe(200);
    const [forward] = await eventually(() => (forwards().length > before ? forwards().slice(before) : undefined));
    expect(signatureValid(env.webhookSigningKey, forward!)).toBe(true);
    expect(forward!.json).toMatchObject({
      type: 'forward',
      provider: providerName('asana'),
      connectionId: creator,
      connections: [{ connectionId: creator, endUser: { endUserId: `user-of-${creator}`, tags: {} } }],
      payload: JSON.parse(genuine.body),
    });
    await eventually(async () => (await new WebhookOutbox(kc).list([ns.name])).length === 0);
    expect(forwards().length).toBe(before + 1);
  });

  it('a second creation while one is in flight is answered 409 (a handshake names no creation) and sends nothing', async () => {
    const calls = asana.creations.length;
    let second: { status: number; body: unknown } | undefined;
    asana.beforeHandshake = async () => {
      const res = await createWebhook(`${creator}-other`);
      second = { status: res.status, body: await res.json() };
    };
    try {
      expect((await createWebhook()).status).toBe(201);
    } finally {
      asana.beforeHandshake = undefined;
    }
    expect(second).toEqual({
      status: 409,
      body: {
        error: {
          code: 'webhook_creation_in_progress',
          message: 'Another webhook creation of this integration is in flight; retry when it ends',
        },
      },
    });
    expect(asana.creations.length).toBe(calls + 1);
    // The first one's window closes (its secret kept) once its proxied call has ended.
    await eventually(async () => !(await secretKeys()).includes('webhookHandshakeWindow'));
  });

  it('a handshake racing into the window first is answered, but the creation then fails and nothing is kept', async () => {
    const kept = (await secretKeys()).filter((k) => k.startsWith('handshakeSecret.'));
    const forged = 'a'.repeat(64);
    let forgedStatus = 0;
    asana.beforeHandshake = async (to) => {
      forgedStatus = (await send(ASANA.handshake(to, forged))).status;
    };
    try {
      const created = await createWebhook(`${creator}-other`);
      // The window takes one secret: Asana's own handshake is refused, so Asana refuses the creation.
      expect(forgedStatus).toBe(200);
      expect(asana.creations.at(-1)).toMatchObject({ handshakeStatus: 401, confirmed: false });
      expect(created.status).toBe(400);
    } finally {
      asana.beforeHandshake = undefined;
    }
    await eventually(async () => !(await secretKeys()).includes('webhookHandshakeWindow'));
    expect((await secretKeys()).filter((k) => k.startsWith('handshakeSecret.'))).toEqual(kept);
    expect((await send(ASANA.sign(ASANA.event(), forged, target()))).status).toBe(401);
  });

  it('a window expires on its own, takes one secret, and an Integration keeps at most 20 secrets, the oldest going first', async () => {
    const name = 'asana-windows';
    await kc
      .makeApiClient(CoreV1Api)
      .createNamespacedSecret({ namespace: ns.name, body: { metadata: { name }, stringData: { clientId: 'x' } } });
    const windows = new HandshakeWindows(replica.ctx.store);
    const t0 = 1_800_000_000_000;
    const stale = (await windows.open(ns.name, name, 'c-stale', t0, 30_000))!;
    // Past its 30 s nothing is taken, and another creation may open the window (the stale one's close then changes nothing).
    expect(await windows.accept(ns.name, name, 'late-secret', t0 + 30_000)).toBe(false);
    const first = (await windows.open(ns.name, name, 'c-0', t0 + 30_001, 30_000))!;
    expect(await windows.close(ns.name, name, stale, true, t0 + 30_002)).toBe(false);
    expect(await windows.accept(ns.name, name, 'secret-0', t0 + 30_003)).toBe(true);
    expect(await windows.accept(ns.name, name, 'secret-0-again', t0 + 30_004)).toBe(false);
    expect(await windows.close(ns.name, name, first, true, t0 + 30_005)).toBe(true);
    for (let i = 1; i <= MAX_HANDSHAKE_SECRETS; i++) {
      const id = (await windows.open(ns.name, name, `c-${i}`, t0 + 40_000 + i, 30_000))!;
      expect(await windows.accept(ns.name, name, `secret-${i}`, t0 + 40_000 + i)).toBe(true);
      await windows.close(ns.name, name, id, true, t0 + 40_000 + i);
    }
    const secret = await kc.makeApiClient(CoreV1Api).readNamespacedSecret({ namespace: ns.name, name });
    const kept = handshakeSecrets(secret);
    expect(kept).toHaveLength(MAX_HANDSHAKE_SECRETS);
    expect(kept.map((k) => k.connectionId)).not.toContain('c-0');
    expect(kept[0]).toMatchObject({ secret: `secret-${MAX_HANDSHAKE_SECRETS}`, connectionId: `c-${MAX_HANDSHAKE_SECRETS}` });
    expect(Object.keys(secret.data ?? {})).not.toContain('webhookHandshakeWindow');
  });
});
