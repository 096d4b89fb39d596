/**
 * What each API call of a refresh costs in CPU: the control plane's (kube-apiserver, etcd, the
 * controller manager, from /proc) and this process's (the Kubernetes client), per call, for the calls
 * a scheduled refresh makes (the refresh Lease's create and delete, the Secret's read and write, the
 * Connection's status write), each made with client-node's typed client and as plain JSON
 * (src/k8s/json-api.ts, what Latchkey uses for them), and a bare `GET /version` as the peer. A profiling aid for the refresh storm (see
 * bench/refresh-storm-notes.md): it prints its figures and writes no docs.
 *
 * Each kind is measured alone, then with BENCH_CALLS_WATCHERS metadata-only watches open on the
 * namespace's Connections (default 3, one per controller replica). The control plane's CPU is split
 * into kube-apiserver, etcd and kube-controller-manager (its garbage collector watches every object).
 * Last, the plain-JSON writes are measured again once the Connections and Secrets carry no
 * managedFields (the API server skips field tracking on updates of such an object): whether that
 * bookkeeping is a large share of a write.
 *
 * Environment: BENCH_CALLS (calls per kind, default 2000), BENCH_CALLS_IN_FLIGHT (default 8),
 * BENCH_CALLS_WATCHERS (default 3).
 */
import { Agent, request } from 'node:https';
import { CoordinationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { createLogger } from '../src/platform/log.js';
import { Leases, microTime } from '../src/k8s/leases.js';
import { makeBoundedApiClient } from '../src/k8s/client.js';
import { KubeJsonApi } from '../src/k8s/json-api.js';
import { CONNECTIONS, GROUP, VERSION, type ConnectionResource } from '../src/k8s/resources.js';
import { KubeStore } from '../src/k8s/store.js';
import { createTestNamespace } from '../dev/cluster.js';
import { applyProvider, createIntegration } from '../dev/fixtures.js';
import { processCpuMs, startBenchControlPlane } from './support.js';
import { ConnectionStatusWriter } from '../src/domain/connection-status-writers.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const IN_FLIGHT = Number(process.env.BENCH_CALLS_IN_FLIGHT ?? 8);
const WATCHERS = Number(process.env.BENCH_CALLS_WATCHERS ?? 3);

async function main(): Promise<void> {
  const { cp, kc } = await startBenchControlPlane(new KubeConfig());
  try {
    const ns = (await createTestNamespace(kc, 'calls')).name;
    await applyProvider(kc, 'calls-oauth', {
      displayName: 'Calls',
      authMode: 'OAUTH2',
      authorizationUrl: 'https://example.test/authorize',
      tokenUrl: 'https://example.test/token',
    });
    await createIntegration(kc, ns, 'calls', { provider: 'calls-oauth' }, { clientId: 'id', clientSecret: 'secret' });
    const store = new KubeStore(kc, { namespaces: [ns], logger: createLogger('silent') });
    await store.start();
    const names: string[] = [];
    for (let i = 0; i < IN_FLIGHT; i++) {
      const c = await store.connections.createConnection({
        namespace: ns,
        spec: { integration: 'calls', provider: 'calls-oauth', connectionId: `c-${i}`, authMode: 'OAUTH2', endUser: { id: `u-${i}` } },
        credentials: {
          type: 'OAUTH2',
          access_token: `at-${i}`,
          refresh_token: `rt-${i}`,
          expires_at: new Date(Date.now() + 3600_000).toISOString(),
        },
      });
      names.push(c.resource.metadata.name);
    }
    // A status like the one a reconciled connection carries: four conditions and the refresh fields.
    for (const name of names) {
      await store.connections.updateConnectionStatus(ns, name, ConnectionStatusWriter.Reconciler, (s) => ({
        ...s,
        conditions: ['IntegrationReady', 'CredentialsValid', 'NeedsReauthorization', 'Ready'].map((type) => ({
          type,
          status: type === 'NeedsReauthorization' ? 'False' : 'True',
          reason: 'Fine',
          message: `${type} holds for this connection`,
          lastTransitionTime: new Date().toISOString(),
          observedGeneration: 1,
        })),
        refreshAttempts: 0,
      }));
    }
    await new Promise((r) => setTimeout(r, 1000)); // the watch brings the writes into the cache
    const leases = new Leases(kc);
    const server = kc.getCurrentCluster()!.server;
    const token = kc.getCurrentUser()!.token!;
    const agent = new Agent({ keepAlive: true, rejectUnauthorized: false, maxSockets: IN_FLIGHT });
    const raw = (method: string, path: string, body?: unknown, contentType = 'application/json') =>
      new Promise<{ status: number; body: unknown }>((resolve, reject) => {
        const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
        const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
        if (payload) Object.assign(headers, { 'content-type': contentType, 'content-length': String(payload.length) });
        const req = request(`${server}${path}`, { method, agent, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if ((res.statusCode ?? 0) >= 300) reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`));
            else {
              // Parsed here, not thrown from the event handler: an uncaught error would leave the control plane running.
              try {
                resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
              } catch (err) {
                reject(err instanceof Error ? err : new Error(String(err)));
              }
            }
          });
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(payload);
      });
    const statusPath = (name: string) => `/apis/${GROUP}/${VERSION}/namespaces/${ns}/${CONNECTIONS.plural}/${name}/status`;

    // The typed clients as the store used them before (its KubeConfig's connections shared).
    const typedLeases = makeBoundedApiClient(kc, CoordinationV1Api);
    const typedCustom = makeBoundedApiClient(kc, CustomObjectsApi);
    const typedCore = makeBoundedApiClient(kc, CoreV1Api);
    const json = new KubeJsonApi(kc);
    // What the typed PUTs write next: read at the start of each pass (below).
    const secrets: V1Secret[] = [];
    const connections: ConnectionResource[] = [];
    const kinds: Array<[string, (worker: number, i: number) => Promise<unknown>]> = [
      ['GET /version (bare HTTPS; the peer)', () => raw('GET', '/version')],
      [
        'Lease create + delete (typed client)',
        async (w, i) => {
          const now = microTime(Date.now());
          const lease = await typedLeases.createNamespacedLease({
            namespace: ns,
            body: {
              metadata: { name: `typed-${w}-${i}` },
              spec: { holderIdentity: 'bench', leaseDurationSeconds: 30, acquireTime: now, renewTime: now, leaseTransitions: 0 },
            },
          });
          await typedLeases.deleteNamespacedLease({
            namespace: ns,
            name: lease.metadata!.name!,
            body: { preconditions: { resourceVersion: lease.metadata!.resourceVersion! } },
          });
        },
      ],
      [
        'Lease create + delete (Leases: plain JSON)',
        async (w, i) => {
          const lease = await leases.create(ns, `json-${w}-${i}`, 'bench', 30);
          await leases.deleteIfUnchanged(ns, lease!.metadata!.name!, lease!.metadata!.resourceVersion!);
        },
      ],
      ['Secret GET (typed client)', (w) => typedCore.readNamespacedSecret({ namespace: ns, name: names[w]! })],
      ['Secret GET (plain JSON)', (w) => json.get(`/api/v1/namespaces/${ns}/secrets/${names[w]!}`)],
      [
        'Secret PUT (typed client)',
        async (w, i) => {
          const s = secrets[w]!;
          secrets[w] = await typedCore.replaceNamespacedSecret({
            namespace: ns,
            name: names[w]!,
            body: { ...s, data: { ...s.data, n: Buffer.from(String(i)).toString('base64') } },
          });
        },
      ],
      [
        'Secret PUT (store.connections.updateCredentials: plain JSON)',
        (w, i) => store.connections.updateCredentials(ns, names[w]!, (c) => ({ ...c, access_token: `at-${w}-${i}` })),
      ],
      [
        'Connection status PUT (typed client)',
        async (w, i) => {
          const c = connections[w]!;
          connections[w] = (await typedCustom.replaceNamespacedCustomObjectStatus({
            group: GROUP,
            version: VERSION,
            namespace: ns,
            plural: CONNECTIONS.plural,
            name: names[w]!,
            body: { ...c, status: { ...c.status, lastRefreshedAt: new Date(Date.now() + i).toISOString() } },
          })) as ConnectionResource;
        },
      ],
      [
        'Connection status PUT (store.connections.updateConnectionStatus: plain JSON)',
        (w, i) =>
          store.connections.updateConnectionStatus(ns, names[w]!, ConnectionStatusWriter.Reconciler, (s) => ({
            ...s,
            lastRefreshedAt: new Date(Date.now() + 1 + i).toISOString(),
          })),
      ],
      [
        'Connection status merge patch (bare HTTPS)',
        (w, i) =>
          raw(
            'PATCH',
            statusPath(names[w]!),
            { status: { lastRefreshedAt: new Date(Date.now() + 2 + i).toISOString() } },
            'application/merge-patch+json',
          ),
      ],
    ];
    // Each kind twice: alone, and with the watches three controller replicas keep open on the
    // namespace's Connections (metadata only), so a write's delivery to watchers shows.
    const watch = (): (() => void) => {
      const req = request(
        `${server}/apis/${GROUP}/${VERSION}/namespaces/${ns}/${CONNECTIONS.plural}?watch=true`,
        {
          agent: new Agent({ rejectUnauthorized: false }),
          headers: { authorization: `Bearer ${token}`, accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' },
        },
        (res) => res.resume(),
      );
      req.on('error', () => undefined);
      req.end();
      return () => req.destroy();
    };
    const rows: string[] = [];
    const measure = async (kinds: Array<[string, (worker: number, i: number) => Promise<unknown>]>) => {
      for (const watchers of [0, WATCHERS]) {
        const stops = Array.from({ length: watchers }, watch);
        // The typed PUTs write what they read last: read again what the pass before changed.
        for (const [w, name] of names.entries()) {
          secrets[w] = await typedCore.readNamespacedSecret({ namespace: ns, name });
          connections[w] = (await typedCustom.getNamespacedCustomObject({
            group: GROUP,
            version: VERSION,
            namespace: ns,
            plural: CONNECTIONS.plural,
            name,
          })) as ConnectionResource;
        }
        await new Promise((r) => setTimeout(r, 500));
        for (const [kind, call] of kinds) {
          for (let i = 0; i < 50; i++) await call(i % IN_FLIGHT, -1 - i); // warm-up
          const before = {
            all: processCpuMs(cp.workDir),
            etcd: processCpuMs(`--data-dir=${cp.workDir}`),
            kcm: processCpuMs(`--kubeconfig=${cp.workDir}`),
          };
          const ownBefore = process.cpuUsage();
          const started = performance.now();
          await Promise.all(
            Array.from({ length: IN_FLIGHT }, async (_, w) => {
              for (let i = w; i < CALLS; i += IN_FLIGHT) await call(w, i);
            }),
          );
          const wall = performance.now() - started;
          const own = process.cpuUsage(ownBefore);
          const all = processCpuMs(cp.workDir) - before.all;
          const etcd = processCpuMs(`--data-dir=${cp.workDir}`) - before.etcd;
          const kcm = processCpuMs(`--kubeconfig=${cp.workDir}`) - before.kcm;
          const per = (ms: number) => (ms / CALLS).toFixed(2);
          const row = `| ${kind} | ${watchers} | ${per(all)} | ${per(all - etcd - kcm)} | ${per(etcd)} | ${per(kcm)} | ${per((own.user + own.system) / 1000)} | ${per(wall)} |`;
          rows.push(row);
          process.stderr.write(`${row}\n`);
        }
        for (const stop of stops) stop();
      }
    };
    await measure(kinds);
    // The same writes once the objects carry no managedFields: the API server skips field tracking
    // on updates of an object that has none.
    for (const name of names) {
      for (const path of [
        `/apis/${GROUP}/${VERSION}/namespaces/${ns}/${CONNECTIONS.plural}/${name}`,
        `/api/v1/namespaces/${ns}/secrets/${name}`,
      ])
        await raw('PATCH', path, { metadata: { managedFields: [{}] } }, 'application/merge-patch+json');
    }
    await new Promise((r) => setTimeout(r, 1000));
    await measure(
      kinds
        .filter(([kind]) => kind.includes('plain JSON') && kind.includes('PUT'))
        .map(([kind, call]) => [`${kind}, no managedFields`, call]),
    );
    await store.stop();
    await json.close();
    process.stdout.write(
      [
        `${CALLS} calls per kind, ${IN_FLIGHT} in flight`,
        '',
        '| call | metadata watches open | control plane CPU ms per call | of it kube-apiserver | etcd | kube-controller-manager | client CPU ms per call | wall ms per call |',
        '|---|---:|---:|---:|---:|---:|---:|---:|',
        ...rows,
        '',
      ].join('\n'),
    );
  } finally {
    await cp.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
