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
import { CustomObjectsApi, loadAllYaml } from '@kubernetes/client-node';
import { WebhookOutbox } from '../../src/k8s/webhook-outbox.js';
import { GROUP, VERSION, type ProviderSpec } from '../../src/k8s/resources.js';
import { IntegrationReconciler } from '../../src/controller/reconcilers/integration.js';
import { integrationsView } from '../../src/http/dashboard/views.js';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { catalogSpec } from '../support/catalog-files.js';
import { REPO_ROOT } from '../../dev/control-plane.js';
import { SIMULATORS, tampered, unsigned, type ProviderSimulator, type SimulatedRequest } from '../support/provider-simulators.js';
import { startReplica, type Replica } from '../support/replica.js';
import { captureLogs } from '../support/log-capture.js';
import { signatureValid, webhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/servers/webhook-receiver.js';

const kc = testKubeConfig();
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let receiver: WebhookReceiver;
let replica: Replica;
/** The replica's log lines (a request that throws would leave its stack trace here). */
const logs = captureLogs();
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
  replica = await startReplica(kc, {
    namespaces: [ns.name],
    components: ['server', 'webhooks'],
    webhookPollMs: 100,
    selfBaseUrl: true,
    logger: logs.logger,
  });
  const store = replica.ctx;
  await eventually(
    () =>
      store.catalog.readSecretValue(ns.name, `${env.name}-keys`, 'webhookSigningKey') &&
      Object.values(SIMULATORS).every(
        (s) => store.catalog.getProvider(providerName(s.provider)) && store.catalog.getIntegration(ns.name, integrationOf(s.provider)),
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
  await replica.ctx.connections.createConnection({
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
      await replica.ctx.connections.createConnection({
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
    await eventually(() => replica.ctx.connections.getConnection(ns.name, integrationOf(sim.provider), connectionId));
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

/** A simulated delivery as the webhook route hands it to the receiver (the body parsed as JSON unless given). */
const delivery = (r: SimulatedRequest, json: unknown = JSON.parse(r.body), query = new URLSearchParams()) => ({
  method: 'POST',
  url: r.url,
  headers: r.headers,
  body: Buffer.from(r.body),
  json,
  query,
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
  const reconciler = new IntegrationReconciler(replica.ctx, replica.ctx.clock, base);
  await createIntegration(kc, ns.name, 'no-webhooks', { provider: 'pwh-none' });
  await applyProvider(kc, 'pwh-none', { displayName: 'None', authMode: 'API_KEY' });
  await eventually(() => replica.ctx.catalog.getIntegration(ns.name, 'no-webhooks') && replica.ctx.catalog.getProvider('pwh-none'));
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
  const rows = await integrationsView(replica.ctx, ns.name, 'https://latchkey.example.com');
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
  const request = () => receiverOf.receive(target, delivery(r));
  expect(await request()).toMatchObject({ status: 503 });
  // The duplicate marker's write failing is a 503 too (the receive would otherwise reject: a 500).
  const noMarkers = new ProviderWebhookReceiver({
    ...replica.ctx,
    markers: { markUsed: () => Promise.reject(new Error('etcd unavailable')), unmarkUsed: () => Promise.resolve() },
  });
  expect(await noMarkers.receive(target, delivery(r))).toMatchObject({
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
  const receive = (r: SimulatedRequest) => budgeted.receive(target, delivery(r));
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
    await eventually(() => (replica.ctx.catalog.listEnvironments(ns.name)[0]?.spec.webhooks?.url ?? '') === (url ?? ''));
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

describe('hostile senders', () => {
  /** A receiver of its own, with its own budget (`perMinute` for each of its buckets). */
  const budgeted = (perMinute: number, sim: ProviderSimulator) => {
    const r = new ProviderWebhookReceiver({
      ...replica.ctx,
      config: { ...replica.ctx.config, providerWebhookRatePerIntegration: perMinute },
    });
    const target = r.target(ns.name, integrationOf(sim.provider))!;
    return (req: SimulatedRequest, query = new URLSearchParams()) => r.receive(target, delivery(req, jsonOrNot(req.body), query));
  };
  const jsonOrNot = (text: string): unknown => {
    try {
      return JSON.parse(text);
    } catch {
      return undefined;
    }
  };
  const logsOf = async (integration: string) => {
    await replica.ctx.oplog!.flush();
    const res = await replica.call('GET', `/logs?integration=${integration}&limit=100`, { key: env.secretKey });
    expect(res.status).toBe(200);
    return res.body.logs as Array<{ id: string; step: string; messages: string[] }>;
  };

  it('an unsigned JSON bomb (a Graph "value" of 200,000 items) is refused with 401 and logged, not a 500 with a stack trace; it spends the refused budget', async () => {
    const sim = SIMULATORS.outlook!;
    const bomb = JSON.stringify({ value: new Array(200_000).fill(0) });
    expect(Buffer.byteLength(bomb)).toBeGreaterThan(390 * 1024);
    const answer = await send({
      method: 'POST',
      url: `${replica.url}${pathOf(sim)}`,
      headers: { 'content-type': 'application/json' },
      body: bomb,
    });
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.text)).toEqual({
      error: { code: 'invalid_signature', message: 'The webhook signature could not be verified.' },
    });
    expect(logs.lines.filter((l) => l.includes('Maximum call stack') || l.includes('RangeError'))).toEqual([]);
    const entries = await eventually(async () => {
      const found = (await logsOf(integrationOf(sim.provider))).filter((e) => e.step === 'receive unverified');
      return found.length ? found : undefined;
    });
    expect(entries[0]!.messages.join('\n')).toContain('webhook refused');
    // Charged like any forgery: past the budget, 429.
    const receive = budgeted(2, sim);
    const request = { method: 'POST', url: `${replica.url}${pathOf(sim)}`, headers: { 'content-type': 'application/json' }, body: bomb };
    expect((await receive(request)).status).toBe(401);
    expect((await receive(request)).status).toBe(401);
    expect(await receive(request)).toMatchObject({ status: 429, headers: { 'retry-after': expect.stringMatching(/^[1-9]\d*$/) } });
  });

  it('a signed Stripe event nested 10,000 levels deep is forwarded, its payload the bytes Stripe sent', async () => {
    const sim = SIMULATORS.stripe!;
    const before = forwardsFor(sim).length;
    const depth = 10_000;
    const id = `evt_deep${randomUUID().replace(/-/g, '').slice(0, 16)}`;
    const body = `{"id":"${id}","object":"event","account":"acct_1032D82eZvKYlo2C","type":"customer.updated","data":{"object":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}}`;
    expect(Buffer.byteLength(body)).toBeGreaterThan(20 * 1024);
    const answer = await send(signed(sim, body));
    expect(answer.status).toBe(200);
    const [forward] = await eventually(() => (forwardsFor(sim).length > before ? forwardsFor(sim).slice(before) : undefined));
    expect(signatureValid(env.webhookSigningKey, forward!)).toBe(true);
    // The payload is the provider's text, byte for byte (compared as text: a deep object would overflow the matcher).
    expect(forward!.body.endsWith(`,"payload":${body}}`)).toBe(true);
    expect(forward!.json).toMatchObject({ type: 'forward', provider: providerName('stripe'), deliveryId: id });
  });

  it('520 refused posts do not evict what the tenant wrote: the earlier deletion and failed proxy call are still there, the refusals in a ring of their own', async () => {
    const sim = SIMULATORS.typeform!;
    const integration = integrationOf(sim.provider);
    await connect(sim, 'to-delete');
    await eventually(() => replica.ctx.connections.getConnection(ns.name, integration, 'to-delete'));
    expect((await replica.call('DELETE', `/connections/to-delete?provider_config_key=${integration}`, { key: env.secretKey })).status).toBe(
      200,
    );
    await replica.ctx.oplog!.flush();
    const deletion = (
      await replica.call('GET', `/logs?integration=${integration}&connection_id=to-delete&operation=deletion`, { key: env.secretKey })
    ).body.logs[0] as { id: string };
    // And a failed proxy call for a connection that is not there (also kept in the environment's ring).
    const proxied = await replica.call('GET', '/proxy/forms', {
      key: env.secretKey,
      headers: { 'connection-id': 'nobody', 'provider-config-key': integration },
    });
    expect(proxied.status).toBe(404);
    await replica.ctx.oplog!.flush();
    const failed = (
      await replica.call('GET', `/logs?integration=${integration}&connection_id=nobody&operation=proxy`, { key: env.secretKey })
    ).body.logs[0] as { id: string };
    const tenants = [deletion.id, failed.id];
    for (const id of tenants) expect((await replica.call('GET', `/logs/${id}`, { key: env.secretKey })).status).toBe(200);

    const forged = unsigned(sim, signed(sim));
    for (let sent = 0; sent < 520; sent += 20)
      for (const a of await Promise.all(Array.from({ length: 20 }, () => send(forged)))) expect(a.status).toBe(401);
    await replica.ctx.oplog!.flush();
    for (const id of tenants) expect((await replica.call('GET', `/logs/${id}`, { key: env.secretKey })).status).toBe(200);
    // The refusals are in the log all the same, in their own ring (its entries found by ID too).
    const refusals = (await logsOf(integration)).filter((e) => e.step === 'receive unverified');
    expect(refusals.length).toBe(100);
    expect(refusals[0]!.id).toMatch(/^unverified\./);
    expect((await replica.call('GET', `/logs/${refusals[0]!.id}`, { key: env.secretKey })).status).toBe(200);
  });

  it('genuine Graph validation handshakes are answered while forgeries flood the integration', async () => {
    const sim = SIMULATORS.outlook!;
    const receive = budgeted(3, sim);
    const forgery = () => tampered(sim, signed(sim));
    const handshake = (token: string) => receive(forgery(), new URLSearchParams({ validationToken: token }));
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await receive(forgery())).status);
    // The forgeries are past their budget...
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
    expect(statuses.slice(3)).toEqual([429, 429, 429]);
    // ...and the handshakes, between further forgeries, are all answered.
    for (const token of ['Validation: one', 'Validation: two', 'Validation: three']) {
      expect((await receive(forgery())).status).toBe(429);
      expect(await handshake(token)).toMatchObject({ status: 200, contentType: 'text/plain', body: token });
    }
  });

  it('GitHub signs the body only: a captured delivery re-sent with a new X-GitHub-Delivery is forwarded again, as docs/provider-webhooks.md warns', async () => {
    const sim = SIMULATORS['github-app']!;
    const before = forwardsFor(sim).length;
    const captured = signed(sim);
    expect((await send(captured)).status).toBe(200);
    const replayed = { ...captured, headers: { ...captured.headers, 'x-github-delivery': randomUUID() } };
    expect((await send(replayed)).status).toBe(200);
    const both = await eventually(() => (forwardsFor(sim).length >= before + 2 ? forwardsFor(sim).slice(before) : undefined));
    expect(both.map((w) => (w.json as unknown as ForwardWebhookBody).payload)).toEqual([
      JSON.parse(captured.body),
      JSON.parse(captured.body),
    ]);
    // What the application should deduplicate on is documented.
    const doc = readFileSync(join(REPO_ROOT, 'docs/provider-webhooks.md'), 'utf8');
    expect(doc).toContain('re-sent with a new `X-GitHub-Delivery` is forwarded again');
  });
});
