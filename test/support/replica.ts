/**
 * One Latchkey "replica" in the test process, built like src/app/run.ts builds one: a context from
 * `createContext`, its store started, then the components the test asks for.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Config } from '../../src/platform/config.js';
import { createContext } from '../../src/app/context.js';
import type { AppContext } from '../../src/context/app-context.js';
import { startController, type RunningController, type StartControllerOptions } from '../../src/controller/start.js';
import { connectionCacheOf, shardOf } from '../../src/app/run.js';
import { startHttpServer, type RunningServer } from '../../src/http/server.js';
import { WebhookOutbox } from '../../src/k8s/webhook-outbox.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { eventually, testLogger } from '../../dev/cluster.js';
import type { EgressGuard } from '../../src/egress/guard.js';
import type { Logger } from '../../src/platform/log.js';
import { testConfig } from './config.js';
import { contractStoreView, type ContractStoreView } from './contract-store-view.js';

/** server: the HTTP server; controller: the controller with its health server; webhooks: a dispatcher. */
export type TestComponent = 'server' | 'controller' | 'webhooks';

export interface ReplicaOptions {
  namespaces: string[];
  /** Default: the server alone. */
  components?: TestComponent[];
  /** Shorthand for config.identity (also names the replica in log lines). */
  identity?: string;
  config?: Partial<Config>;
  controller?: StartControllerOptions;
  /** The webhook dispatcher's poll interval (ms). */
  webhookPollMs?: number;
  /** Point publicBaseUrl at this replica's own server (a browser must reach the callback). */
  selfBaseUrl?: boolean;
  /** Secret key `call()` sends unless told otherwise. */
  key?: string;
  /** An egress guard with an injected resolver; otherwise one from the config (loopback peers allowed). */
  egress?: EgressGuard;
  /** The replica's logger (e.g. captureLogs().logger); otherwise testLogger() (silent unless LATCHKEY_TEST_LOG_LEVEL). */
  logger?: Logger;
}

export interface CallOptions {
  key?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface Replica {
  /** The replica's context; `store`: the contract tests' view of the store (contract-store-view.ts). */
  ctx: AppContext & { store: ContractStoreView };
  server?: RunningServer;
  /** The server's URL ('' without a server). */
  url: string;
  controller?: RunningController;
  dispatcher?: WebhookDispatcher;
  /** A JSON request to the server with the given (or default) secret key. */
  call(method: string, path: string, opts?: CallOptions): Promise<{ status: number; body: any; headers: Headers }>;
  /** Stops the components in reverse order; `release` is passed to the controller (Lease handover). */
  stop(opts?: { release?: boolean }): Promise<void>;
}

export async function startReplica(kc: KubeConfig, opts: ReplicaOptions): Promise<Replica> {
  const components = opts.components ?? ['server'];
  const config = testConfig(opts.namespaces, { ...(opts.identity ? { identity: opts.identity } : {}), ...opts.config });
  const logger = (opts.logger ?? testLogger()).child({ replica: config.identity });
  const shard = shardOf(components, opts.controller?.leaderElection ?? config.leaderElection, config.identity);
  const ctx = createContext({
    config,
    logger,
    kc,
    egress: opts.egress,
    ...shard,
    ...connectionCacheOf(components, config.connectionCacheEntries),
  });
  await ctx.caches.start();
  const stops: Array<(o?: { release?: boolean }) => Promise<void>> = [() => ctx.caches.stop()];

  let server: RunningServer | undefined;
  if (components.includes('server')) {
    server = await startHttpServer(ctx, 0, '127.0.0.1');
    if (opts.selfBaseUrl) config.publicBaseUrl = server.url;
    stops.push(() => server!.close());
  }
  let dispatcher: WebhookDispatcher | undefined;
  if (components.includes('webhooks')) {
    dispatcher = new WebhookDispatcher({
      outbox: new WebhookOutbox(ctx.kc),
      catalog: ctx.catalog,
      fetch: ctx.fetch,
      clock: ctx.clock,
      logger: ctx.logger,
      metrics: ctx.metrics,
      config: ctx.config,
      identity: ctx.config.identity,
      pollIntervalMs: opts.webhookPollMs ?? 150,
      // Long enough that a loaded machine does not time out a request the receiver answered (a retry would be a duplicate).
      requestTimeoutMs: 15_000,
    });
    dispatcher.start();
    stops.push(() => dispatcher!.stop());
  }
  let controller: RunningController | undefined;
  if (components.includes('controller')) {
    controller = await startController(ctx, {
      healthPort: 0,
      renewIntervalMs: 500,
      retryIntervalMs: 500,
      refreshBackoff: { baseMs: 300, maxMs: 3_000, jitter: 0 },
      sweepIntervalMs: 60_000,
      ...opts.controller,
    });
    stops.push((o) => controller!.stop(o));
  }

  return {
    ctx: Object.assign(ctx, { store: contractStoreView(ctx) }),
    server,
    url: server?.url ?? '',
    controller,
    dispatcher,
    async call(method, path, callOpts = {}) {
      if (!server) throw new Error('this replica runs no server');
      return callJson(server.url, method, path, { ...callOpts, key: callOpts.key ?? opts.key });
    },
    async stop(stopOpts) {
      for (const s of stops.reverse()) await s(stopOpts);
      stops.length = 0;
    },
  };
}

/** A JSON request; the body is parsed when it is JSON and left as text otherwise. */
export async function callJson(
  baseUrl: string,
  method: string,
  path: string,
  opts: CallOptions = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = { ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}), ...(opts.headers ?? {}) };
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: the test will see the text
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/**
 * A server replica for the simulated providers of one namespace (its Environment's key, the simulators' egress
 * guard, its own URL as the public one), returned once `synced` holds for what it has read (an Environment in
 * the namespace is always waited for).
 */
export async function startSimulatedServer(
  kc: KubeConfig,
  namespace: string,
  opts: { key: string; egress: EgressGuard; synced: (ctx: Replica['ctx']) => unknown; logger?: Logger },
): Promise<Replica> {
  const replica = await startReplica(kc, {
    namespaces: [namespace],
    components: ['server'],
    selfBaseUrl: true,
    key: opts.key,
    egress: opts.egress,
    ...(opts.logger ? { logger: opts.logger } : {}),
  });
  await eventually(() => replica.ctx.catalog.listEnvironments(namespace).length > 0 && opts.synced(replica.ctx));
  return replica;
}
