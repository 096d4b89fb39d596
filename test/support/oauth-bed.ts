/**
 * The bed of the refresh tests: a test namespace, a real oidc-provider (refresh token rotation and reuse
 * detection on), an OAUTH2 Provider pointing at it, and an Integration holding the test client; on top,
 * as a file needs them, an Environment with server replicas, or one controller replica.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { EnvironmentSpec, ProviderSpec } from '../../src/k8s/resources.js';
import type { StoreParts } from '../../src/k8s/store.js';
import { createTestNamespace, eventually } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { startOidcServer, type OidcTestServer, type TestClient } from '../../dev/peers/oidc-server.js';
import { startSoloController } from './controller-bed.js';
import { startReplica, type Replica, type ReplicaOptions } from './replica.js';

export interface OAuthBedOptions {
  namespace: string;
  client: TestClient;
  integration: string;
  accessTokenTtl?: number;
  /** The client secret the Integration's Secret holds; the client's own unless a test wants it wrong. */
  integrationClientSecret?: string;
  /** The Provider's name; `oidc-<namespace>` unless given. */
  providerName?: string;
  /** More of the Provider's spec (e.g. tokenRequestAuthMethod). */
  provider?: Partial<ProviderSpec>;
}

export interface OAuthBed {
  ns: Awaited<ReturnType<typeof createTestNamespace>>;
  /** ns.name */
  namespace: string;
  oidc: OidcTestServer;
  providerName: string;
  /** `stop` runs first when the bed closes (what a test file starts on top of the bed). */
  alsoStop(stop: () => Promise<unknown>): void;
  /** Stops what alsoStop was given (last first), the OAuth server, deletes the Provider and the namespace. */
  close(): Promise<void>;
}

export async function startOAuthBed(kc: KubeConfig, opts: OAuthBedOptions): Promise<OAuthBed> {
  const ns = await createTestNamespace(kc, opts.namespace);
  const oidc = await startOidcServer({ clients: [opts.client], accessTokenTtl: opts.accessTokenTtl });
  const providerName = opts.providerName ?? `oidc-${ns.name}`;
  await applyProvider(kc, providerName, {
    displayName: 'Test OIDC',
    authMode: 'OAUTH2',
    authorizationUrl: oidc.authorizationUrl,
    tokenUrl: oidc.tokenUrl,
    ...opts.provider,
  });
  await createIntegration(
    kc,
    ns.name,
    opts.integration,
    { provider: providerName },
    { clientId: opts.client.clientId, clientSecret: opts.integrationClientSecret ?? opts.client.clientSecret },
  );
  const stops: Array<() => Promise<unknown>> = [];
  return {
    ns,
    namespace: ns.name,
    oidc,
    providerName,
    alsoStop: (stop) => void stops.push(stop),
    close: async () => {
      for (const stop of stops.reverse()) await stop();
      await oidc.close();
      await deleteProvider(kc, providerName);
      await ns.delete();
    },
  };
}

/** The OAuth bed watched by one controller replica (no leader election) that has the Integration cached. */
export interface OAuthControllerBed extends OAuthBed {
  replica: Replica;
  store(): StoreParts;
  /** The Environment, when one was asked for. */
  env?: TestEnvironment;
}

export async function startOAuthControllerBed(
  kc: KubeConfig,
  opts: OAuthBedOptions & { environment?: Partial<EnvironmentSpec> },
): Promise<OAuthControllerBed> {
  const bed = await startOAuthBed(kc, opts);
  const env = opts.environment && (await createEnvironment(kc, bed.namespace, opts.environment));
  const replica = await startSoloController(kc, bed.namespace);
  bed.alsoStop(() => replica.stop());
  await eventually(() => replica.ctx.catalog.getIntegration(bed.namespace, opts.integration));
  return { ...bed, replica, store: () => replica.ctx, env };
}

/** The OAuth bed with an Environment, and server replicas (one per kubeconfig given) using its secret key. */
export interface OAuthServersBed extends OAuthBed {
  env: TestEnvironment;
  servers: Replica[];
}

export async function startOAuthServersBed(
  kc: KubeConfig,
  opts: OAuthBedOptions & {
    environment?: Partial<EnvironmentSpec>;
    /** One server replica for each (a replica may reach the API server its own way); none unless given. */
    kubeconfigs?: KubeConfig[];
    replica?: Omit<ReplicaOptions, 'namespaces' | 'key'>;
    /** What else the bed sets up before the servers start (more Providers and Integrations). */
    before?: (bed: OAuthBed & { env: TestEnvironment }) => Promise<void>;
    /** What else each server must have cached before the tests start. */
    ready?: (store: StoreParts, namespace: string) => unknown;
  },
): Promise<OAuthServersBed> {
  const bed = await startOAuthBed(kc, opts);
  const env = await createEnvironment(kc, bed.namespace, opts.environment);
  await opts.before?.({ ...bed, env });
  const servers = await Promise.all(
    (opts.kubeconfigs ?? []).map((k) => startReplica(k, { ...opts.replica, namespaces: [bed.namespace], key: env.secretKey })),
  );
  bed.alsoStop(() => Promise.all(servers.map((s) => s.stop())));
  for (const s of servers) {
    const store = s.ctx;
    await eventually(
      () =>
        store.catalog.getIntegration(bed.namespace, opts.integration) &&
        store.catalog.getProvider(bed.providerName) &&
        (opts.ready?.(store, bed.namespace) ?? true),
    );
    await eventually(async () => (await s.call('GET', '/providers')).status === 200);
  }
  return { ...bed, env, servers };
}
