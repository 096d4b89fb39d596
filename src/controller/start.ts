import { RefreshLock } from '../auth/refresh/lock.js';
import { refresherFor } from '../connections/shared-refresher.js';
import type { TokenRefresher } from '../auth/refresh/token-refresher.js';
import type { AppContext } from '../context/app-context.js';
import { ConnectionEvents } from '../k8s/events.js';
import { Leases } from '../k8s/leases.js';
import { CredentialBindings } from '../k8s/credential-bindings.js';
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
  // CredentialBindings: not waited for (each listed binding reaches the controller as an 'add'), so a
  // cluster without their CRD or rights yet (an image upgraded before its chart) still refreshes tokens.
  let bindings = opts.bindings;
  if (bindings === undefined && ctx.config.credentialBindings) {
    bindings = new CredentialBindings(ctx.kc, { namespaces: ctx.config.bindingNamespaces, logger: ctx.logger });
    void bindings.start();
  }
  const ownBindings = opts.bindings === undefined ? bindings : undefined;
  const controller = new Controller({
    ...opts,
    bindings,
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
          readiness: () => readiness(ctx.caches),
          beforeMetrics: () => controller.updateConnectionGauge(),
        });
  return {
    controller,
    refresher,
    health,
    async stop(stopOpts) {
      await health?.close();
      await controller.stop(stopOpts);
      await ownBindings?.stop();
    },
  };
}
