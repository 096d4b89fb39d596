/**
 * Provider aliases (`spec.aliases`): `GET /providers/{alias}` answers the target Provider, an Integration
 * naming an alias connects and proxies as the target, a Provider's own name wins over another's alias,
 * two Providers claiming one alias resolve to the first by name, a removed alias stops answering, and
 * the CRD refuses an alias that is not a name or that is the Provider's own name.
 */
import { CustomObjectsApi } from '@kubernetes/client-node';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { apiMessage, statusOf } from '../../src/k8s/errors.js';
import { GROUP, VERSION, type ProviderSpec } from '../../src/k8s/resources.js';
import { startReplica, type Replica } from '../support/replica.js';
import { startUpstream, type Upstream } from '../support/servers/upstream.js';

const kc = testKubeConfig();
const id = process.pid;
const TARGET = `alias-target-${id}`;
/** Sorts after TARGET: claims the same alias and loses. */
const RIVAL = `alias-zrival-${id}`;
/** A Provider whose name another Provider also lists as an alias: the name wins. */
const NAMED = `alias-named-${id}`;
const OLD = `alias-old-${id}`;
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let api: Replica;
let up: Upstream;

const keyProvider = (displayName: string, baseUrl: string, aliases?: string[]): ProviderSpec => ({
  displayName,
  authMode: 'API_KEY',
  ...(aliases ? { aliases } : {}),
  proxy: { baseUrl, headers: { 'x-api-key': '${apiKey}' } },
});

beforeAll(async () => {
  up = await startUpstream();
  ns = await createTestNamespace(kc, 'aliases');
  await applyProvider(kc, TARGET, keyProvider('Alias target', up.origin, [OLD, NAMED]));
  await applyProvider(kc, RIVAL, keyProvider('Alias rival', 'https://rival.example.test', [OLD]));
  await applyProvider(kc, NAMED, keyProvider('Alias named', 'https://named.example.test'));
  env = await createEnvironment(kc, ns.name);
  await createIntegration(kc, ns.name, 'legacy', { provider: OLD });
  api = await startReplica(kc, { namespaces: [ns.name], key: env.secretKey });
  await eventually(
    () => api.ctx.catalog.getIntegration(ns.name, 'legacy') && api.ctx.caches.providers.get(RIVAL) && api.ctx.caches.providers.get(NAMED),
  );
});

afterAll(async () => {
  await api?.stop();
  await up?.close();
  for (const p of [TARGET, RIVAL, NAMED]) await deleteProvider(kc, p);
  await ns?.delete();
});

describe('provider aliases', () => {
  it('GET /providers/{alias} answers the target, with its aliases', async () => {
    const res = await api.call('GET', `/providers/${OLD}`);
    expect(res.status).toBe(200);
    expect(res.body.data.name).toBe(TARGET);
    expect(res.body.data.aliases).toEqual([OLD, NAMED]);
    expect(res.body.data.proxy.base_url).toBe(up.origin);
  });

  it("a Provider's own name wins over another Provider's alias", async () => {
    const res = await api.call('GET', `/providers/${NAMED}`);
    expect(res.status).toBe(200);
    expect(res.body.data.name).toBe(NAMED);
  });

  it('GET /providers lists each Provider once under its name, and search finds it by alias', async () => {
    const all = await api.call('GET', '/providers');
    const names = (all.body.data as Array<{ name: string }>).map((p) => p.name);
    expect(names.filter((n) => n === TARGET)).toHaveLength(1);
    expect(names).not.toContain(OLD);
    const found = await api.call('GET', `/providers?search=${OLD}`);
    expect((found.body.data as Array<{ name: string }>).map((p) => p.name).sort()).toEqual([TARGET, RIVAL].sort());
  });

  it('an Integration naming an alias imports a connection and proxies as the target', async () => {
    const created = await api.call('POST', '/connections', {
      body: { provider_config_key: 'legacy', connection_id: 'c1', credentials: { type: 'API_KEY', apiKey: 'alias-key-1' } },
    });
    expect(created.status).toBe(201);
    const proxied = await api.call('GET', '/proxy/v1/things?x=1', {
      headers: { 'provider-config-key': 'legacy', 'connection-id': 'c1' },
    });
    expect(proxied.status).toBe(200);
    expect(proxied.body.url).toBe('/v1/things?x=1');
    expect(proxied.body.headers['x-api-key']).toBe('alias-key-1');
  });

  it('an alias no Provider declares any more stops answering', async () => {
    const GONE = `alias-gone-${id}`;
    await applyProvider(kc, TARGET, keyProvider('Alias target', up.origin, [OLD, NAMED, GONE]));
    await eventually(async () => (await api.call('GET', `/providers/${GONE}`)).body?.data?.name === TARGET);
    await applyProvider(kc, TARGET, keyProvider('Alias target', up.origin, [OLD, NAMED]));
    await eventually(async () => (await api.call('GET', `/providers/${GONE}`)).status === 404);
    const res = await api.call('GET', `/providers/${GONE}`);
    expect(res.body.error.code).toBe('unknown_provider');
  });

  it('the CRD refuses an alias equal to the Provider name, or not shaped like a name', async () => {
    const custom = kc.makeApiClient(CustomObjectsApi);
    const refusal = async (name: string, aliases: string[]) => {
      const body = {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'Provider',
        metadata: { name },
        spec: keyProvider('Refused', 'https://x.example.test', aliases),
      };
      try {
        await custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: 'providers', body, dryRun: 'All' });
        return 'accepted';
      } catch (err) {
        return `${statusOf(err)} ${apiMessage(err)}`;
      }
    };
    expect(await refusal(`alias-self-${id}`, [`alias-self-${id}`])).toMatch(/^422 .*aliases do not include its own name/);
    expect(await refusal(`alias-bad-${id}`, ['Not_A_Name'])).toMatch(/^422 .*spec\.aliases\[0\]/);
    expect(await refusal(`alias-fine-${id}`, [`alias-fine-old-${id}`])).toBe('accepted');
  });
});
