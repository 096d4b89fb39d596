/**
 * The bed of the reconciler tests: a test namespace watched by one controller replica (no leader
 * election), Providers named after the namespace (deleted with the bed), and a wait for an object's
 * Ready condition as the API server has it.
 */
import { CustomObjectsApi, type KubeConfig, type V1ObjectMeta } from '@kubernetes/client-node';
import { GROUP, VERSION, type Condition, type ProviderResource } from '../../src/k8s/resources.js';
import { createTestNamespace, eventually } from '../../dev/cluster.js';
import { applyProvider, deleteProvider } from '../../dev/fixtures.js';
import { condition, readCustom } from './kube.js';
import { startReplica, type Replica } from './replica.js';

/** What the reconcilers write conditions on: any of Latchkey's namespaced custom resources. */
export type Conditioned = { metadata: V1ObjectMeta; status?: { conditions?: Condition[] } };

export interface ControllerBed {
  ns: Awaited<ReturnType<typeof createTestNamespace>>;
  replica: Replica;
  /** Applies a Provider named `<suffix>-<namespace>`; returns its name. */
  provider(suffix: string, spec: Parameters<typeof applyProvider>[2]): Promise<string>;
  /** Waits (20 s at most) until the namespaced object has a Ready condition, with `reason` if given. */
  readyOf<T extends Conditioned = Conditioned>(plural: string, name: string, reason?: string): Promise<{ obj: T; ready: Condition }>;
  /** Waits (20 s at most) until the (cluster-wide) Provider has a Ready condition, with `reason` if given. */
  providerReady(name: string, reason?: string): Promise<Condition>;
  /** Stops the replica, deletes the Providers and the namespace. */
  close(): Promise<void>;
}

/** One controller replica watching `namespace`, without leader election (it owns every connection). */
export function startSoloController(kc: KubeConfig, namespace: string): Promise<Replica> {
  return startReplica(kc, { namespaces: [namespace], components: ['controller'], identity: 'solo', config: { leaderElection: false } });
}

export async function startControllerBed(kc: KubeConfig, prefix: string): Promise<ControllerBed> {
  const ns = await createTestNamespace(kc, prefix);
  const replica = await startSoloController(kc, ns.name);
  const providers: string[] = [];
  return {
    ns,
    replica,
    async provider(suffix, spec) {
      const name = `${suffix}-${ns.name}`;
      providers.push(name);
      await applyProvider(kc, name, spec);
      return name;
    },
    async readyOf<T extends Conditioned = Conditioned>(plural: string, name: string, reason?: string) {
      return eventually(
        async () => {
          const obj = await readCustom<T>(kc, plural, ns.name, name);
          const ready = condition(obj, 'Ready');
          return ready && (reason === undefined || ready.reason === reason) ? { obj, ready } : undefined;
        },
        20_000,
        100,
      );
    },
    async providerReady(name, reason) {
      const custom = kc.makeApiClient(CustomObjectsApi);
      return eventually(
        async () => {
          const obj = (await custom.getClusterCustomObject({
            group: GROUP,
            version: VERSION,
            plural: 'providers',
            name,
          })) as ProviderResource;
          const ready = condition(obj, 'Ready');
          return ready && (reason === undefined || ready.reason === reason) ? ready : undefined;
        },
        20_000,
        100,
      );
    },
    async close() {
      await replica.stop();
      for (const p of providers) await deleteProvider(kc, p);
      await ns.delete();
    },
  };
}
