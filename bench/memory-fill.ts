/**
 * Filling the API server for bench/memory.ts: connections written straight to it in parallel (not
 * through Latchkey: the point is the replicas' start, not the import path), shaped as an import
 * writes them: a Connection, then its credentials Secret owned by it (the owner reference needs the
 * Connection's uid, so the two writes of one connection are sequential), both carrying the shard
 * label the rendezvous hashing gives them.
 *
 * Two clients: `typed` (@kubernetes/client-node's generated API, as the benchmark always did: a new
 * TLS connection per call, see src/k8s/shared-dispatcher.ts) and `json` (src/k8s/json-api.ts, plain
 * JSON over one pooled connection, as Latchkey's refresh path writes: the same two writes with far
 * less CPU per write, here and in the API server). Each fill reports its rate and where the CPU went (this
 * process, the control plane, idle), so a faster setting is measured, not guessed.
 */
import { randomBytes, randomInt } from 'node:crypto';
import type { CoreV1Api, CustomObjectsApi, KubeConfig, V1Secret } from '@kubernetes/client-node';
import { KubeJsonApi } from '../src/k8s/json-api.js';
import type { RendezvousHash } from '../src/controller/rendezvous-hash.js';
import { connectionObjectName } from '../src/k8s/names.js';
import { credentialsSecret } from '../src/k8s/store.js';
import { API_VERSION, CONNECTIONS, GROUP, LABELS, VERSION, type ConnectionResource } from '../src/k8s/resources.js';
import { idleBetween, machineCpu, processCpuMs } from './support.js';

export const INTEGRATION = 'keys';

export type FillClient = 'typed' | 'json';

export interface FillTarget {
  namespace: string;
  provider: string;
  /** The ring whose owner each connection's shard label names. */
  ring: RendezvousHash;
  custom: CustomObjectsApi;
  core: CoreV1Api;
  kc: KubeConfig;
  /** The control plane's work directory: its processes' CPU (support.ts processCpuMs). */
  controlPlaneMarker: string;
}

export interface FillReport {
  connections: number;
  seconds: number;
  perSecond: number;
  inFlight: number;
  client: FillClient;
  /** CPU of this process (the client) per connection, ms. */
  benchCpuMsPerConnection: number;
  /** CPU of the control plane's processes (API server, etcd, controller manager) per connection, ms. */
  controlPlaneCpuMsPerConnection: number;
  machineIdle: number;
}

export const connectionName = (i: number) => connectionObjectName(INTEGRATION, `mem-${i}`);

export function connectionBody(t: FillTarget, i: number): ConnectionResource {
  const connectionId = `mem-${i}`;
  const name = connectionObjectName(INTEGRATION, connectionId);
  return {
    apiVersion: API_VERSION,
    kind: CONNECTIONS.kind,
    metadata: {
      name,
      namespace: t.namespace,
      labels: { [LABELS.integration]: INTEGRATION, [LABELS.shard]: t.ring.ownerOf(`${t.namespace}/${name}`)! },
    },
    spec: {
      integration: INTEGRATION,
      provider: t.provider,
      connectionId,
      authMode: 'API_KEY',
      endUser: { id: `user-${i}` },
      metadata: { plan: 'pro' },
      connectionConfig: {},
      id: randomInt(1, 2 ** 48 - 1),
    },
  };
}

/** As src/k8s/store.ts writes it (credentialsSecret), with the shard label the owner would add. */
export function secretBody(owner: ConnectionResource): V1Secret {
  const secret = credentialsSecret(owner, { type: 'API_KEY', apiKey: `bench-${randomBytes(16).toString('hex')}` });
  secret.metadata!.labels![LABELS.shard] = owner.metadata.labels![LABELS.shard]!;
  return secret;
}

/** Writes connections `from` .. `to - 1` with `inFlight` at a time; logs every 5,000. */
export async function fill(
  t: FillTarget,
  from: number,
  to: number,
  opts: { inFlight: number; client: FillClient; log: (line: string) => void },
): Promise<FillReport> {
  const json = new KubeJsonApi(t.kc);
  const connectionsPath = `/apis/${GROUP}/${VERSION}/namespaces/${t.namespace}/${CONNECTIONS.plural}`;
  const secretsPath = `/api/v1/namespaces/${t.namespace}/secrets`;
  const one =
    opts.client === 'json'
      ? async (i: number) => {
          const created = await json.post<ConnectionResource>(connectionsPath, connectionBody(t, i));
          await json.post(secretsPath, secretBody(created));
        }
      : async (i: number) => {
          const created = (await t.custom.createNamespacedCustomObject({
            group: GROUP,
            version: VERSION,
            namespace: t.namespace,
            plural: CONNECTIONS.plural,
            body: connectionBody(t, i),
          })) as ConnectionResource;
          await t.core.createNamespacedSecret({ namespace: t.namespace, body: secretBody(created) });
        };
  let next = from;
  let done = 0;
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  const cp0 = processCpuMs(t.controlPlaneMarker);
  const machine0 = machineCpu();
  try {
    await Promise.all(
      Array.from({ length: opts.inFlight }, async () => {
        while (next < to) {
          const i = next++;
          for (let attempt = 0; ; attempt++) {
            try {
              await one(i);
              break;
            } catch (err) {
              // A busy API server may time out a request; anything else, or persisting, is a broken run.
              if (attempt >= 3) throw err;
              await new Promise((r) => setTimeout(r, 500 * (attempt + 1)));
              await deleteConnection(t, i);
            }
          }
          if (++done % 5000 === 0)
            opts.log(`created ${from + done}/${to} (${(done / ((performance.now() - started) / 1000)).toFixed(0)}/s)`);
        }
      }),
    );
  } finally {
    await json.close();
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const count = to - from;
  return {
    connections: count,
    seconds: Math.round(seconds * 10) / 10,
    perSecond: Math.round((count / seconds) * 10) / 10,
    inFlight: opts.inFlight,
    client: opts.client,
    benchCpuMsPerConnection: Math.round(((cpu.user + cpu.system) / 1000 / count) * 100) / 100,
    controlPlaneCpuMsPerConnection: Math.round(((processCpuMs(t.controlPlaneMarker) - cp0) / count) * 100) / 100,
    machineIdle: Math.round(idleBetween(machine0, machineCpu()) * 100) / 100,
  };
}

async function deleteConnection(t: FillTarget, i: number): Promise<void> {
  const name = connectionName(i);
  await t.custom
    .deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: t.namespace, plural: CONNECTIONS.plural, name })
    .catch(() => undefined);
  await t.core.deleteNamespacedSecret({ namespace: t.namespace, name }).catch(() => undefined);
}
