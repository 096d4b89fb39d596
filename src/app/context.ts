import type { KubeConfig } from '../k8s/client.js';
import type { Registry } from 'prom-client';
import { systemClock, type Clock } from '../domain/clock.js';
import { statusAfterNewCredentials } from '../domain/connection-state.js';
import { boundedFetch } from '../egress/bounded-body.js';
import { createGuardedFetch } from '../egress/fetch.js';
import { EgressGuard } from '../egress/guard.js';
import { KubeStore, type StoreParts } from '../k8s/store.js';
import { OplogStore } from '../k8s/oplog-store.js';
import { OperationLog } from '../oplog/operation-log.js';
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/log.js';
import type { AppContext } from '../context/app-context.js';
import { Counter, createRegistry, metric } from '../platform/metrics.js';

export interface ContextOptions {
  config: Config;
  logger: Logger;
  kc: KubeConfig;
  clock?: Clock;
  /** A guard with an injected resolver (tests); otherwise one from config.egressAllow and the system resolver. */
  egress?: EgressGuard;
  metrics?: Registry;
  /** An existing store (tests that share one); otherwise a new one watching config.watchNamespaces. */
  store?: KubeStore;
  /**
   * A controller replica alone in its process (this identity): cache whole only its shard's
   * Connections and their credentials Secrets, and of the other Connections their identity.
   */
  shard?: string;
  /** Cache only the credentials Secrets of this shard (a benchmark's server without credentials). */
  credentialShard?: string;
  /** Keep at most this many connections in memory (a server: src/k8s/bounded-cache.ts). */
  boundedConnections?: { maxEntries: number };
}

/**
 * The one place an {@link AppContext} is assembled. The store is created but not started: the
 * caller starts it (and stops it) as part of its own lifecycle.
 */
export function createContext(opts: ContextOptions): AppContext {
  const { config, logger, kc } = opts;
  const clock = opts.clock ?? systemClock;
  const metrics = opts.metrics ?? createRegistry();
  const egress = opts.egress ?? new EgressGuard({ allow: config.egressAllow });
  // Said at start-up, so an allowlist that opens private addresses is never a surprise.
  if (egress.allowlist.isEmpty) logger.info('egress: outbound calls reach public addresses only');
  else
    logger.warn(
      { egressAllow: egress.allowlist.describe() },
      'egress: outbound calls may also reach these private addresses and names (LATCHKEY_EGRESS_ALLOW)',
    );
  return {
    config,
    logger,
    kc,
    ...storeParts(
      opts.store ??
        new KubeStore(kc, {
          namespaces: config.watchNamespaces,
          logger,
          credentialShard: opts.credentialShard ?? opts.shard,
          connectionShard: opts.shard,
          boundedConnections: opts.boundedConnections,
          deriveStatus: (resource, credentials) => {
            const created = Date.parse(String(resource.metadata.creationTimestamp ?? ''));
            return statusAfterNewCredentials(
              undefined,
              credentials,
              config,
              Number.isFinite(created) ? created : clock.now(),
              'authorized',
            );
          },
        }),
    ),
    clock,
    metrics,
    // Every answer read through it is bounded, whoever reads it (openid-client included).
    fetch: boundedFetch(createGuardedFetch(egress).fetch, config.providerAnswerMaxBytes),
    egress,
    oplog: createOperationLog({ config, logger, kc, clock, metrics }),
  };
}

/** The parts of a store an {@link AppContext} hands out. */
export function storeParts(store: KubeStore): StoreParts {
  const { caches, connections, connectionScans, connectionUpkeep, catalog, catalogStatus } = store;
  return { caches, connections, connectionScans, connectionUpkeep, catalog, catalogStatus };
}

/** The operation log stored in the cluster with the configured retention; its drops are counted. */
export function createOperationLog(ctx: Pick<AppContext, 'config' | 'logger' | 'kc' | 'clock' | 'metrics'>): OperationLog {
  const { config } = ctx;
  const keepMs = config.oplogKeepDays * 86_400_000;
  // A ConfigMap holds at most 1 MiB; the rest is room for metadata.
  const maxBytes = 900 * 1024;
  const store = new OplogStore(
    ctx.kc,
    {
      connection: { keepEntries: config.oplogKeepEntries, keepMs, maxEntries: config.oplogMaxEntries, maxBytes },
      environment: {
        keepEntries: config.oplogEnvironmentEntries,
        keepMs: 0,
        maxEntries: config.oplogEnvironmentEntries,
        maxBytes,
      },
      // The same size, apart: senders nobody authenticated fill this one only.
      unverified: {
        keepEntries: config.oplogEnvironmentEntries,
        keepMs: 0,
        maxEntries: config.oplogEnvironmentEntries,
        maxBytes,
      },
    },
    ctx.clock,
  );
  const dropped = metric(
    ctx.metrics,
    'latchkey_oplog_dropped_total',
    (registers) =>
      new Counter({
        name: 'latchkey_oplog_dropped_total',
        help: 'Operation log entries logged to stdout but not stored, by reason (queue_full, write_failed).',
        labelNames: ['reason'] as const,
        registers,
      }),
  );
  return new OperationLog({
    sink: store,
    clock: ctx.clock,
    logger: ctx.logger,
    maxQueue: config.oplogQueueSize,
    onDropped: (n, why) => dropped.inc({ reason: why }, n),
  });
}
