/** What the controller tests share: a namespace, a store, a real OAuth server, and controller instances. */
import { randomBytes } from 'node:crypto';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { loadConfig, type Config } from '../../src/app/config.js';
import { createContext, type AppContext } from '../../src/app/context.js';
import { startController, type RunningController, type StartControllerOptions } from '../../src/controller/start.js';
import { GROUP, VERSION, type ConnectionResource } from '../../src/k8s/resources.js';
import { KubeStore, type StoredConnection } from '../../src/k8s/store.js';
import { Registry } from '../../src/app/metrics.js';
import { testLogger } from '../../dev/cluster.js';
import { LOOPBACK_PEERS } from '../../dev/egress.js';
import type { OidcTestServer, TestClient } from '../../dev/peers/oidc-server.js';

export function testConfig(namespace: string, identity: string, overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({ LATCHKEY_EGRESS_ALLOW: LOOPBACK_PEERS }),
    watchNamespaces: [namespace],
    leaseNamespace: namespace,
    leaseName: 'latchkey-controller',
    identity,
    leaseDurationSeconds: 3,
    ...overrides,
  };
}

/** One controller "replica": its own store (informers), registry and controller. */
export interface Replica {
  ctx: AppContext;
  running: RunningController;
  stop(opts?: { release?: boolean }): Promise<void>;
}

export async function startReplica(
  kc: KubeConfig,
  namespace: string,
  identity: string,
  opts: StartControllerOptions = {},
  config: Partial<Config> = {},
): Promise<Replica> {
  const logger = testLogger().child({ replica: identity });
  const store = new KubeStore(kc, { namespaces: [namespace], logger });
  await store.start();
  const ctx: AppContext = createContext({ config: testConfig(namespace, identity, config), logger, kc, store, metrics: new Registry() });
  const running = await startController(ctx, {
    healthPort: 0,
    renewIntervalMs: 500,
    retryIntervalMs: 500,
    refreshBackoff: { baseMs: 300, maxMs: 3_000, jitter: 0 },
    sweepIntervalMs: 60_000,
    ...opts,
  });
  return {
    ctx,
    running,
    async stop(stopOpts) {
      await running.stop(stopOpts);
      await store.stop();
    },
  };
}

/** Imports an OAUTH2 connection with tokens minted by the OAuth server. */
export async function importOAuth2(
  store: KubeStore,
  oidc: OidcTestServer,
  client: TestClient,
  namespace: string,
  integration: string,
  provider: string,
  opts: { connectionId?: string; expiresInMs?: number } = {},
): Promise<{ conn: StoredConnection; refreshToken: string; accessToken: string }> {
  const tokens = await oidc.mintTokens({ clientId: client.clientId });
  const connectionId = opts.connectionId ?? `conn-${randomBytes(4).toString('hex')}`;
  const conn = await store.createConnection({
    namespace,
    spec: { integration, provider, connectionId, authMode: 'OAUTH2', endUser: { id: 'u1' } },
    credentials: {
      type: 'OAUTH2',
      access_token: tokens.accessToken,
      refresh_token: tokens.refreshToken,
      expires_at: new Date(Date.now() + (opts.expiresInMs ?? tokens.expiresIn * 1000)).toISOString(),
      raw: { expires_in: tokens.expiresIn, token_type: 'Bearer' },
    },
  });
  return { conn, refreshToken: tokens.refreshToken, accessToken: tokens.accessToken };
}

export function condition(
  resource:
    ConnectionResource | { status?: { conditions?: Array<{ type: string; status: string; reason: string; message: string }> } } | undefined,
  type: string,
) {
  return resource?.status?.conditions?.find((c) => c.type === type);
}

/** Reads an object straight from the API server. */
export async function readCustom<T>(kc: KubeConfig, plural: string, namespace: string, name: string): Promise<T> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  return (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural, name })) as T;
}

export async function eventsOf(kc: KubeConfig, namespace: string, objectName: string) {
  const core = kc.makeApiClient(CoreV1Api);
  return (await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${objectName}` })).items;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
