import type { KubeConfig } from '../k8s/client.js';
import { startHttpServer, type RunningServer } from '../http/server.js';
import type { Config } from '../platform/config.js';
import { startController, type RunningController } from '../controller/start.js';
import { startFlowRecordSweeper } from '../connect/flow-sweeper.js';
import { startWebhookDelivery } from '../webhooks/start.js';
import { compactHeap } from './compact-heap.js';
import { startIdleCompaction } from './idle-compaction.js';
import { createContext } from './context.js';
import type { AppContext } from '../context/app-context.js';
import type { Logger } from '../platform/log.js';

/**
 * How long requests in flight get to finish when the server stops (after LATCHKEY_SHUTDOWN_DELAY_SECONDS),
 * well within the chart's 30 s grace and the 15 s before test harnesses SIGKILL a stopping process.
 */
const SERVER_DRAIN_MS = 5_000;

export type Component = 'server' | 'controller';

/**
 * The shard a process caches whole, if any: a controller alone in its process with leader election
 * on (as the chart runs it) keeps whole only its share of Connections and Secrets; a server needs them all.
 */
export function shardOf(
  components: readonly string[],
  leaderElection: boolean,
  identity: string,
): { shard: string } | Record<string, never> {
  return components.length === 1 && components[0] === 'controller' && leaderElection ? { shard: identity } : {};
}

/**
 * Whether a process keeps a bounded cache of connections: a server (with or without webhook delivery)
 * when `LATCHKEY_CONNECTION_CACHE_ENTRIES` is set. A controller walks every connection of its share,
 * so a process running one caches them all.
 */
export function connectionCacheOf(
  components: readonly string[],
  entries: number,
): { boundedConnections: { maxEntries: number } } | Record<string, never> {
  return entries > 0 && !components.includes('controller') ? { boundedConnections: { maxEntries: entries } } : {};
}

export interface RunOptions {
  config: Config;
  logger: Logger;
  kc: KubeConfig;
  components: Component[];
}

export interface Running {
  ctx: AppContext;
  server?: RunningServer;
  controller?: RunningController;
  stop(): Promise<void>;
}

/** Wires the components from one context and starts them; `stop()` undoes it in reverse order. */
export async function runLatchkey(opts: RunOptions): Promise<Running> {
  const { config, logger, kc } = opts;
  const shard = shardOf(opts.components, config.leaderElection, config.identity);
  const ctx: AppContext = createContext({
    config,
    logger,
    kc,
    ...shard,
    ...connectionCacheOf(opts.components, config.connectionCacheEntries),
  });
  const store = ctx.caches;
  // Stopped last (runs first in this list, which is reversed): what the others recorded is stored.
  const stops: Array<() => Promise<void>> = [async () => ctx.oplog?.stop(), () => store.stop()];
  await store.start();
  compactHeap(logger, 'caches synced', ctx.metrics);
  let server: RunningServer | undefined;
  if (opts.components.includes('server')) {
    server = await startHttpServer(ctx);
    // close() keeps serving for the shutdown delay while the Service drops the pod, stops taking
    // requests, lets those in flight finish (a rolling update's clients lose none: test/e2e), then writes the last_fetched_at times the fetches recorded
    // (src/connections/last-fetched.ts), before the store stops.
    stops.push(() => server!.close({ lingerMs: ctx.config.shutdownDelaySeconds * 1000, drainMs: SERVER_DRAIN_MS }));
    stops.push(startWebhookDelivery(ctx), startFlowRecordSweeper(ctx));
  }
  let controller: RunningController | undefined;
  if (opts.components.includes('controller')) {
    // Alone in its process, a controller compacts again once its first reconciles are done, and when it
    // goes quiet after its heap grew (idle-compaction.ts): no request waits on the pause. Beside a
    // server it leaves the heap as it is.
    const idle =
      shard.shard !== undefined
        ? startIdleCompaction({
            compact: () => compactHeap(logger, 'idle after growth', ctx.metrics),
            onCheck: (seen) => logger.debug(seen, 'idle compaction check'),
          })
        : undefined;
    controller = await startController(
      ctx,
      idle
        ? {
            afterReconcileWave: () => {
              compactHeap(logger, 'reconcile wave done', ctx.metrics);
              idle.compacted();
            },
          }
        : {},
    );
    stops.push(
      async () => idle?.stop(),
      () => controller!.stop(),
    );
  }
  return {
    ctx,
    server,
    controller,
    async stop() {
      for (const s of stops.reverse()) await s().catch((err: unknown) => logger.warn({ err }, 'error while stopping'));
    },
  };
}
