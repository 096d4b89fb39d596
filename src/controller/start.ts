import { appInstallationStrategy } from '../auth/app-installation.js';
import { RefreshLock } from '../auth/refresh-lock.js';
import { TokenRefresher } from '../auth/refresh.js';
import type { AppContext } from '../context.js';
import { ConnectionEvents } from '../k8s/events.js';
import { Leases } from '../k8s/leases.js';
import { Controller, type ControllerOptions } from './controller.js';
import { startHealthServer, type RunningHealthServer } from './health-server.js';

export interface RunningController {
  controller: Controller;
  refresher: TokenRefresher;
  health?: RunningHealthServer;
  stop(opts?: { release?: boolean }): Promise<void>;
}

export interface StartControllerOptions extends Partial<Omit<ControllerOptions, 'ctx'>> {
  /** Port of the /healthz, /readyz, /metrics server: config.controllerPort by default; null for none. */
  healthPort?: number | null;
  /** Time-to-live of a connection's refresh lock (seconds). */
  refreshLockTtlSeconds?: number;
}

/** The refresher the controller uses: the shared single-flight one, with APP installation tokens. */
export function createRefresher(ctx: AppContext, leases: Leases, ttlSeconds = 30): TokenRefresher {
  const refresher = new TokenRefresher({
    store: ctx.store,
    lock: new RefreshLock(leases, ctx.config.identity, ttlSeconds),
    events: new ConnectionEvents(ctx.kc, 'latchkey-controller', () => ctx.clock.now()),
    config: ctx.config,
    logger: ctx.logger,
    clock: ctx.clock,
    fetch: ctx.fetch,
    metrics: ctx.metrics,
  });
  refresher.registerStrategy('APP', appInstallationStrategy);
  return refresher;
}

/** Builds and starts the controller (and its health server) from a context whose store is started. */
export async function startController(ctx: AppContext, opts: StartControllerOptions = {}): Promise<RunningController> {
  const leases = (opts.leases as Leases | undefined) ?? new Leases(ctx.kc, () => ctx.clock.now());
  const refresher = (opts.refresher as TokenRefresher | undefined) ?? createRefresher(ctx, leases, opts.refreshLockTtlSeconds);
  const controller = new Controller({
    ...opts,
    ctx,
    leases,
    refresher,
    events: opts.events ?? new ConnectionEvents(ctx.kc, 'latchkey-controller', () => ctx.clock.now()),
    refreshLockName: opts.refreshLockName ?? RefreshLock.leaseName,
  });
  controller.start();
  const port = opts.healthPort === undefined ? ctx.config.controllerPort : opts.healthPort;
  const health = port === null
    ? undefined
    : await startHealthServer({
        port,
        registry: ctx.metrics,
        logger: ctx.logger,
        ready: () => ctx.store.hasSynced,
        beforeMetrics: () => controller.updateConnectionGauge(),
      });
  return {
    controller,
    refresher,
    health,
    async stop(stopOpts) {
      await health?.close();
      await controller.stop(stopOpts);
    },
  };
}
