/**
 * What the tests of workloads' access run against: an Environment's namespace with two Integrations
 * (`crm`, `mail`) of an OAuth 2 provider whose API is a loopback upstream, a second namespace without
 * an Environment (an application's), and Latchkey's HTTP server as production wires it, except that
 * its clock can be moved (the review caches' bounds) and its TokenReview/SubjectAccessReview calls are
 * the API server's, counted.
 */
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { createContext } from '../../src/app/context.js';
import type { AppContext } from '../../src/context/app-context.js';
import { createRequestListener } from '../../src/http/app.js';
import { KubeAccessReviews, type AccessReviews } from '../../src/k8s/access-reviews.js';
import type { Config } from '../../src/platform/config.js';
import type { StoredCredentials } from '../../src/k8s/store.js';
import { createTestNamespace, eventually, testKubeConfig, testLogger } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { testConfig } from './config.js';
import { startUpstream, type Upstream } from './servers/upstream.js';
import { bodyOf } from './api-clients.js';

export interface WorkloadBed {
  kc: KubeConfig;
  /** The Environment's namespace. */
  namespace: string;
  /** An application namespace without an Environment. */
  appNamespace: string;
  env: TestEnvironment;
  ctx: AppContext;
  url: string;
  upstream: Upstream;
  provider: string;
  /** Moves the server's clock forward. */
  advance(ms: number): void;
  /** TokenReviews and SubjectAccessReviews made so far. */
  calls: { tokenReviews: number; accessReviews: number };
  addConnection(integration: string, connectionId: string, credentials?: StoredCredentials): Promise<void>;
  call(
    bearer: string | undefined,
    method: string,
    path: string,
    opts?: { body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

export async function startWorkloadBed(prefix: string, config: Partial<Config> = {}): Promise<WorkloadBed> {
  const kc = testKubeConfig();
  const ns = await createTestNamespace(kc, prefix);
  const appNs = await createTestNamespace(kc, `${prefix}-app`);
  const env = await createEnvironment(kc, ns.name);
  const upstream = await startUpstream();
  const suffix = randomBytes(3).toString('hex');
  const provider = `workload-${suffix}`;
  await applyProvider(kc, provider, {
    displayName: 'Workload test provider',
    authMode: 'OAUTH2',
    authorizationUrl: `${upstream.origin}/authorize`,
    tokenUrl: `${upstream.origin}/token`,
    proxy: { baseUrl: `${upstream.origin}/api` },
  });
  const client = { clientId: 'cid', clientSecret: 'csecret' };
  await createIntegration(kc, ns.name, 'crm', { provider }, client);
  await createIntegration(kc, ns.name, 'mail', { provider }, client);

  let offset = 0;
  const ctx = createContext({
    config: testConfig([ns.name], config),
    logger: testLogger(),
    kc,
    clock: { now: () => Date.now() + offset },
  });
  await ctx.caches.start();
  const real = new KubeAccessReviews(kc);
  const calls = { tokenReviews: 0, accessReviews: 0 };
  const counted = countingReviews(real, calls);
  const server: Server = createServer(createRequestListener(ctx, { accessReviews: counted }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  await eventually(
    () =>
      ctx.catalog.listEnvironments(ns.name).length > 0 &&
      ctx.catalog.getReferencedSecret(ns.name, `${env.name}-keys`) &&
      ctx.catalog.getProvider(provider) &&
      ctx.catalog.getIntegration(ns.name, 'crm') &&
      ctx.catalog.getIntegration(ns.name, 'mail') &&
      ctx.catalog.getReferencedSecret(ns.name, 'mail-client'),
  );

  return {
    kc,
    namespace: ns.name,
    appNamespace: appNs.name,
    env,
    ctx,
    url,
    upstream,
    provider,
    calls,
    advance: (ms) => (offset += ms),
    async addConnection(integration, connectionId, credentials) {
      await ctx.connections.createConnection({
        namespace: ns.name,
        spec: { integration, provider, connectionId, authMode: 'OAUTH2' },
        credentials: credentials ?? {
          type: 'OAUTH2',
          access_token: `at-${integration}-${connectionId}`,
          refresh_token: `rt-${integration}-${connectionId}`,
          expires_at: new Date(Date.now() + 3600_000).toISOString(),
          raw: {},
        },
      });
    },
    async call(bearer, method, path, opts = {}) {
      const headers: Record<string, string> = {
        ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
        ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(opts.headers ?? {}),
      };
      const res = await fetch(`${url}${path}`, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      });
      return { status: res.status, body: await bodyOf(res), headers: res.headers };
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await real.close();
      await ctx.oplog?.flush();
      await ctx.caches.stop();
      await upstream.close();
      await deleteProvider(kc, provider);
      await ns.delete();
      await appNs.delete();
    },
  };
}

/** Access reviews passed on to `real`, each counted in `calls`. */
export function countingReviews(real: AccessReviews, calls: { tokenReviews: number; accessReviews: number }): AccessReviews {
  return {
    reviewToken: (token, audiences) => {
      calls.tokenReviews++;
      return real.reviewToken(token, audiences);
    },
    reviewAccess: (user, attrs) => {
      calls.accessReviews++;
      return real.reviewAccess(user, attrs);
    },
  };
}
