import { RefreshLock } from '../auth/refresh/lock.js';
import { refresherFor } from '../connections/shared-refresher.js';
import type { TokenRefresher } from '../auth/refresh/token-refresher.js';
import type { AppContext } from '../context/app-context.js';
import { ConnectionEvents } from '../k8s/events.js';
import { Leases } from '../k8s/leases.js';
import { readiness } from '../k8s/readiness.js';
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

/** Builds and starts the controller (and its health server) from a context whose store is started. */
export async function startController(ctx: AppContext, opts: StartControllerOptions = {}): Promise<RunningController> {
  const leases = (opts.leases as Leases | undefined) ?? new Leases(ctx.kc, () => ctx.clock.now());
  const refresher = (opts.refresher as TokenRefresher | undefined) ?? refresherFor(ctx, opts.refreshLockTtlSeconds);
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
  const health =
    port === null
      ? undefined
      : await startHealthServer({
          port,
          registry: ctx.metrics,
          logger: ctx.logger,
          readiness: () => readiness(ctx.store),
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
