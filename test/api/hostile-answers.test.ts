/**
 * Providers answering too much (issue #38, item 1): every reader of a provider's answer stops at
 * LATCHKEY_PROVIDER_ANSWER_MAX_BYTES with `provider_answer_too_large`, closes the connection long
 * before a 100 MB answer was written, and stores nothing. Readers: the OAuth 2 refresh (openid-client
 * through our customFetch), the Connect flow's code exchange, the OAuth 1 request token and access
 * token calls, the TWO_STEP/BILL JSON helper (an import), the APP installation token. Also: a token
 * answer with a huge field below the read limit is stored with `raw` trimmed and works; one whose
 * access token alone is too large for a Secret is refused and the old credentials kept.
 */
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { requestTemporaryCredentials, requestTokenCredentials } from '../../src/modes/shared/oauth1.js';
import { exchangeAuthorizationCode } from '../../src/auth/oauth2-authorization.js';
import { requestInstallationToken } from '../../src/modes/shared/app-installation.js';
import { RAW_MAX_BYTES } from '../../src/domain/credentials.js';
import type { IntegrationResource, ProviderResource } from '../../src/k8s/resources.js';
import { catalogSpec } from '../support/catalog-files.js';
import { startReplica, type Replica } from '../support/replica.js';
import { startUpstream, type Upstream } from '../support/servers/upstream.js';
import { endlessAnswer } from '../support/servers/endless-answer.js';
import { generateKeyPairSync } from 'node:crypto';

const kc = testKubeConfig();
const client = { clientId: 'hostile-answers-client', clientSecret: 'hostile-answers-secret-0123456789' };
const suffix = String(process.pid);
const HUGE = `hostile-huge-${suffix}`;
const BIG_TOKEN = `hostile-big-token-${suffix}`;
const BIG_RAW = `hostile-big-raw-${suffix}`;
const TWO_STEP = `hostile-two-step-${suffix}`;
/** Most bytes a peer may have written when the reader stopped at 1 MiB (socket buffers hold a few MB). */
const CUT_SHORT = 20 * 1024 * 1024;

let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let up: Upstream;
let a: Replica;
const huge = endlessAnswer();

beforeAll(async () => {
  ns = await createTestNamespace(kc, 'hostile-answers');
  up = await startUpstream();
  up.onRaw('/huge', huge.handler);
  // Below the read limit, a valid token answer with a 300 KiB field nobody needs.
  up.on('/big-raw', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ access_token: 'fresh-at', refresh_token: 'fresh-rt', expires_in: 3600, junk: 'j'.repeat(300 * 1024) }));
  });
  // An access token of 900 KiB: read whole (under 1 MiB), too large for a Secret.
  up.on('/big-token', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ access_token: 't'.repeat(900 * 1024), expires_in: 3600 }));
  });
  for (const [name, path] of [
    [HUGE, '/huge'],
    [BIG_TOKEN, '/big-token'],
    [BIG_RAW, '/big-raw'],
  ] as const) {
    await applyProvider(kc, name, {
      displayName: name,
      authMode: 'OAUTH2',
      authorizationUrl: `${up.origin}/authorize`,
      tokenUrl: `${up.origin}${path}`,
    });
  }
  const twoStep = catalogSpec('docker-hub');
  await applyProvider(kc, TWO_STEP, { ...twoStep, twoStep: { ...twoStep.twoStep, tokenUrl: `${up.origin}/huge` } });
  env = await createEnvironment(kc, ns.name);
  await createIntegration(kc, ns.name, 'huge', { provider: HUGE }, client);
  await createIntegration(kc, ns.name, 'big-token', { provider: BIG_TOKEN }, client);
  await createIntegration(kc, ns.name, 'big-raw', { provider: BIG_RAW }, client);
  await createIntegration(kc, ns.name, 'two-step', { provider: TWO_STEP });
  a = await startReplica(kc, { namespaces: [ns.name], key: env.secretKey });
  await eventually(
    () =>
      a.ctx.catalog.getIntegration(ns.name, 'two-step') &&
      a.ctx.catalog.getProvider(TWO_STEP) &&
      a.ctx.catalog.readSecretValue(ns.name, 'big-raw-client', 'clientId'),
  );
});

afterAll(async () => {
  await a?.stop();
  await up?.close();
  for (const p of [HUGE, BIG_TOKEN, BIG_RAW, TWO_STEP]) await deleteProvider(kc, p);
  await ns?.delete();
});

const OLD = { type: 'OAUTH2', access_token: 'old-at', refresh_token: 'old-rt' };

/** Imports an OAUTH2 connection whose access token has expired (a fetch refreshes it). */
async function importExpired(integration: string, connectionId: string) {
  const res = await a.call('POST', '/connections', {
    body: {
      provider_config_key: integration,
      connection_id: connectionId,
      credentials: { ...OLD, expires_at: new Date(Date.now() - 60_000).toISOString() },
    },
  });
  expect(res.status).toBe(201);
  await eventually(() => a.ctx.connections.getConnection(ns.name, integration, connectionId));
}

const stored = (integration: string, connectionId: string) =>
  a.ctx.connections.getConnection(ns.name, integration, connectionId)?.credentials;

/** The peer closed the connection long before it wrote its 100 MB. */
async function expectCutShort(calls: number) {
  await eventually(() => huge.calls.length >= calls && huge.last()?.cutShort === true);
  expect(huge.last()!.finished).toBe(false);
  expect(huge.last()!.written).toBeLessThan(CUT_SHORT);
}

describe('refresh', () => {
  it('stops reading a 100 MB token answer, answers provider_answer_too_large with a log_id, and keeps the old credentials', async () => {
    await importExpired('huge', 'refresh-huge');
    const before = huge.calls.length;
    const res = await a.call('GET', '/connections/refresh-huge?provider_config_key=huge');
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('provider_answer_too_large');
    expect(res.body.error.message).toMatch(/log_id: \S+/);
    await expectCutShort(before + 1);
    expect(stored('huge', 'refresh-huge')).toMatchObject(OLD);
    // The failure is on the connection, as a transient one (the end user is not asked to reconnect).
    await eventually(() => a.ctx.connections.getConnection(ns.name, 'huge', 'refresh-huge')?.resource.status?.errors?.length);
    const errors = a.ctx.connections.getConnection(ns.name, 'huge', 'refresh-huge')!.resource.status!.errors!;
    expect(errors[errors.length - 1]).toMatchObject({ refreshFailure: 'transient' });
  });

  it('refuses an access token too large for a Secret and keeps the old credentials', async () => {
    await importExpired('big-token', 'refresh-big-token');
    const res = await a.call('GET', '/connections/refresh-big-token?provider_config_key=big-token');
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('provider_answer_too_large');
    expect(JSON.stringify(res.body)).not.toContain('tttttttt');
    expect(stored('big-token', 'refresh-big-token')).toMatchObject(OLD);
  });

  it('stores a token answer with a huge field with raw trimmed to its limit; the connection works', async () => {
    await importExpired('big-raw', 'refresh-big-raw');
    const res = await a.call('GET', '/connections/refresh-big-raw?provider_config_key=big-raw');
    expect(res.status).toBe(200);
    expect(res.body.credentials).toMatchObject({ type: 'OAUTH2', access_token: 'fresh-at' });
    const kept = stored('big-raw', 'refresh-big-raw')!;
    expect(kept).toMatchObject({ access_token: 'fresh-at', refresh_token: 'fresh-rt' });
    const raw = kept.raw as Record<string, unknown>;
    expect(raw).not.toHaveProperty('junk');
    expect(raw).toMatchObject({ access_token: 'fresh-at', expires_in: 3600 });
    expect(JSON.stringify(raw).length).toBeLessThanOrEqual(RAW_MAX_BYTES);
    // Served again from the store, without another token call.
    const again = await a.call('GET', '/connections/refresh-big-raw?provider_config_key=big-raw');
    expect(again.status).toBe(200);
    expect(again.body.credentials.access_token).toBe('fresh-at');
  });
});

describe('the JSON helper of TWO_STEP and BILL', () => {
  it('an import whose exchange answers 100 MB fails with provider_answer_too_large and creates nothing', async () => {
    const before = huge.calls.length;
    const res = await a.call('POST', '/connections', {
      body: {
        provider_config_key: 'two-step',
        connection_id: 'two-step-huge',
        credentials: { type: 'TWO_STEP', username: 'u', password: 'p' },
      },
    });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('provider_answer_too_large');
    await expectCutShort(before + 1);
    expect(a.ctx.connections.getConnection(ns.name, 'two-step', 'two-step-huge')).toBeUndefined();
  });
});

describe('the Connect flow readers (the replica fetch, bounded)', () => {
  const provider = () => a.ctx.catalog.getProvider(HUGE) as ProviderResource;
  const integration = () => a.ctx.catalog.getIntegration(ns.name, 'huge') as IntegrationResource;

  it('the OAuth 2 code exchange', async () => {
    const before = huge.calls.length;
    const callback = new URL('https://latchkey.example.test/oauth/callback?code=c&state=s');
    const err = await exchangeAuthorizationCode(
      { provider: provider(), integration: integration(), client, connectionConfig: {}, fetch: a.ctx.fetch },
      callback,
      { redirectUri: 'https://latchkey.example.test/oauth/callback', expectedState: 's' },
      Date.now(),
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'upstream', code: 'provider_answer_too_large' });
    await expectCutShort(before + 1);
  });

  it('the OAuth 1 request token and access token calls', async () => {
    const consumer = { consumerKey: 'ck', consumerSecret: 'cs', fetch: a.ctx.fetch };
    let before = huge.calls.length;
    await expect(requestTemporaryCredentials(consumer, `${up.origin}/huge`, 'https://latchkey.example.test/cb')).rejects.toMatchObject({
      code: 'provider_answer_too_large',
    });
    await expectCutShort(before + 1);
    before = huge.calls.length;
    await expect(requestTokenCredentials(consumer, `${up.origin}/huge`, { token: 't', tokenSecret: 's' }, 'v')).rejects.toMatchObject({
      code: 'provider_answer_too_large',
    });
    await expectCutShort(before + 1);
  });

  it('the APP installation token', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const before = huge.calls.length;
    await expect(
      requestInstallationToken({
        appId: '1',
        privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        tokenUrl: `${up.origin}/huge`,
        fetch: a.ctx.fetch,
        now: Date.now(),
      }),
    ).rejects.toMatchObject({ code: 'provider_answer_too_large' });
    await expectCutShort(before + 1);
  });
});
