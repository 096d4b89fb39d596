/**
 * The bed of the bad-input tests (api/hostile-input.test.ts, api/fuzz.test.ts): a namespace with an
 * OAUTH2 Integration `crm` and an API_KEY Integration `keys`, of the Providers `<prefix>-oauth` and
 * `<prefix>-apikey`, served by one replica holding the Environment's secret key. `close` stops the
 * replica and deletes the Providers and the namespace.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { createTestNamespace, eventually } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { startReplica, type Replica, type ReplicaOptions } from './replica.js';

export interface HostileBed {
  ns: Awaited<ReturnType<typeof createTestNamespace>>;
  env: TestEnvironment;
  api: Replica;
  providers: { oauth: string; keys: string };
  close(): Promise<void>;
}

/** `title` names the Providers ("<title> OAuth", "<title> API key"); `replica`: options of the serving replica. */
export async function startHostileBed(
  kc: KubeConfig,
  prefix: string,
  title: string,
  replica: Partial<ReplicaOptions> = {},
): Promise<HostileBed> {
  const providers = { oauth: `${prefix}-oauth`, keys: `${prefix}-apikey` };
  const ns = await createTestNamespace(kc, prefix);
  let api: Replica | undefined;
  const close = async () => {
    await api?.stop();
    await Promise.all(Object.values(providers).map((p) => deleteProvider(kc, p)));
    await ns.delete();
  };
  try {
    await applyProvider(kc, providers.oauth, {
      displayName: `${title} OAuth`,
      authMode: 'OAUTH2',
      authorizationUrl: 'https://auth.example.test/authorize',
      tokenUrl: 'https://auth.example.test/token',
    });
    await applyProvider(kc, providers.keys, { displayName: `${title} API key`, authMode: 'API_KEY' });
    const env = await createEnvironment(kc, ns.name);
    await createIntegration(kc, ns.name, 'crm', { provider: providers.oauth }, { clientId: 'id', clientSecret: 'secret' });
    await createIntegration(kc, ns.name, 'keys', { provider: providers.keys });
    const started = await startReplica(kc, { namespaces: [ns.name], key: env.secretKey, ...replica });
    api = started;
    await eventually(() => started.ctx.catalog.getIntegration(ns.name, 'crm') && started.ctx.catalog.getIntegration(ns.name, 'keys'));
    await eventually(async () => (await started.call('GET', '/providers')).status === 200);
    return { ns, env, api: started, providers, close };
  } catch (err) {
    await close();
    throw err;
  }
}
