import type { StoredConnection, StoredCredentials } from '../k8s/store.js';
import type { AppContext } from '../app/context.js';
import type { ConnectionResource } from '../k8s/resources.js';
import { ConnectionReconciler } from './reconcilers/connection.js';
import { EnvironmentReconciler } from './reconcilers/environment.js';
import { IntegrationReconciler } from './reconcilers/integration.js';
import { LeaderElector, type LeaseClient } from './leader-election.js';
import { controllerMetrics, type ControllerMetrics } from './metrics.js';
import { ProviderReconciler } from './reconcilers/provider.js';
import { connectionKey, RefreshScheduler, splitKey, type RefreshFn, type RefreshSchedulerOptions } from './refresh-scheduler.js';
import { refreshTime } from './refresh-timing.js';
import { Sweeper } from './sweeper.js';
import { WorkQueue } from './workqueue.js';
import { enqueueRefreshFailedWebhook } from '../webhooks/auth-webhooks.js';
import { EnvironmentKeys } from '../auth/environment-keys.js';

/** The parts of the shared refresher (src/auth/refresh.ts TokenRefresher) the controller uses. */
export interface Refresher {
  ensureFresh: RefreshFn;
  isRefreshable(credentials: StoredCredentials): boolean;
  renewsAhead(credentials: StoredCredentials): boolean;
}

export interface ControllerOptions {
  ctx: AppContext;
  refresher: Refresher;
  events: RefreshSchedulerOptions['events'];
  /** Leases (src/k8s/leases.ts) for leader election; required unless leader election is off. */
  leases?: LeaseClient & { delete?(namespace: string, name: string): Promise<void> };
  /** Defaults: config.leaderElection, leaseName, leaseNamespace, identity, leaseDurationSeconds. */
  leaderElection?: boolean;
  identity?: string;
  leaseName?: string;
  leaseNamespace?: string;
  leaseDurationSeconds?: number;
  renewIntervalMs?: number;
  retryIntervalMs?: number;
  /** Name of a connection's refresh lock Lease (removed with the connection). */
  refreshLockName?: (connectionName: string) => string;
  reconcileConcurrency?: number;
  refreshConcurrency?: number;
  /** Backoff of transient refresh failures. */
  refreshBackoff?: RefreshSchedulerOptions['backoff'];
  sweepIntervalMs?: number;
  /** Every object is reconciled again this often (missed events, time-based conditions). */
  resyncIntervalMs?: number;
}

/** One term as leader: the queues, timers and sweeper that exist only while this instance leads. */
class LeaderSession {
  readonly reconcile: WorkQueue;
  readonly scheduler: RefreshScheduler;
  private readonly sweeper: Sweeper;
  private readonly resync: NodeJS.Timeout;

  constructor(
    private readonly controller: Controller,
    opts: ControllerOptions,
    metrics: ControllerMetrics,
  ) {
    const { ctx } = opts;
    const { store, clock, logger } = ctx;
    this.scheduler = new RefreshScheduler({
      store,
      refresh: (ns, integration, id, o) => opts.refresher.ensureFresh(ns, integration, id, o),
      nextRefreshAt: (conn: StoredConnection) => refreshTime(conn.credentials, ctx.config),
      // Only what the strategy wants renewed ahead (locally minted JWTs are made when used).
      isRefreshable: (c) => opts.refresher.renewsAhead(c),
      events: opts.events,
      clock,
      metrics,
      logger: logger.child({ component: 'refresh-scheduler' }),
      backoff: opts.refreshBackoff,
      concurrency: opts.refreshConcurrency,
      onStateChanged: (key) => this.reconcile.add(`connection:${key}`),
      mayRefresh: () => this.controller.ownsRefresh,
      onReauthorizationRequired: (connection, message) =>
        enqueueRefreshFailedWebhook(ctx, connection, { type: 'reauthorization_required', message }),
    });
    const providers = new ProviderReconciler(store, clock);
    const integrations = new IntegrationReconciler(store, clock);
    const environments = new EnvironmentReconciler(store, clock, new EnvironmentKeys(store), ctx.egress);
    const connections = new ConnectionReconciler({
      store,
      clock,
      schedule: (key) => this.scheduler.schedule(key),
      forget: (key) => this.scheduler.forget(key),
      isRefreshable: (c) => opts.refresher.isRefreshable(c),
      renewsAhead: (c) => opts.refresher.renewsAhead(c),
    });
    this.reconcile = new WorkQueue({
      name: 'reconcile',
      concurrency: opts.reconcileConcurrency ?? 4,
      logger: logger.child({ component: 'reconcile' }),
      onDepth: (depth) => metrics.workqueueDepth.set({ queue: 'reconcile' }, depth),
      handler: async (key) => {
        const i = key.indexOf(':');
        const kind = key.slice(0, i);
        const rest = key.slice(i + 1);
        if (kind === 'provider') return providers.reconcile(rest);
        const [ns, name] = splitKey(rest);
        if (kind === 'integration') return integrations.reconcile(ns, name);
        if (kind === 'environment') return environments.reconcile(ns, name);
        if (kind === 'connection') return connections.reconcile(ns, name);
      },
    });
    this.sweeper = new Sweeper({ store, logger, intervalMs: opts.sweepIntervalMs, now: () => clock.now() });
    this.sweeper.start();
    this.resync = setInterval(() => this.enqueueAll(), opts.resyncIntervalMs ?? 5 * 60_000);
    this.resync.unref?.();
    this.enqueueAll();
    void this.controller;
  }

  enqueueAll(): void {
    const { store } = this.controller.ctx;
    for (const p of store.listProviders()) this.reconcile.add(`provider:${p.metadata.name}`);
    for (const i of store.integrations.list()) this.reconcile.add(`integration:${i.metadata.namespace}/${i.metadata.name}`);
    for (const e of store.environments.list()) this.reconcile.add(`environment:${e.metadata.namespace}/${e.metadata.name}`);
    for (const c of store.listAllConnections()) this.reconcile.add(`connection:${connectionKey(c)}`);
  }

  async stop(): Promise<void> {
    clearInterval(this.resync);
    await Promise.all([this.reconcile.stop(), this.scheduler.stop(), this.sweeper.stop()]);
  }
}

/**
 * The controller: while this instance holds the leader Lease, it reconciles Providers, Integrations,
 * Environments and Connections from the store's informer events, schedules every expiring
 * connection's refresh, and sweeps unfinished connections. Followers only keep their caches warm.
 */
export class Controller {
  readonly ctx: AppContext;
  readonly metrics: ControllerMetrics;
  private readonly elector: LeaderElector | undefined;
  private session: LeaderSession | undefined;
  private started = false;
  private transition: Promise<void> = Promise.resolve();

  constructor(private readonly opts: ControllerOptions) {
    this.ctx = opts.ctx;
    this.metrics = controllerMetrics(opts.ctx.metrics);
    this.metrics.leader.set(0);
    const { config, logger } = opts.ctx;
    if (opts.leaderElection ?? config.leaderElection) {
      if (!opts.leases) throw new Error('leader election needs a Leases client');
      this.elector = new LeaderElector({
        leases: opts.leases,
        namespace: opts.leaseNamespace ?? config.leaseNamespace,
        name: opts.leaseName ?? config.leaseName,
        identity: opts.identity ?? config.identity,
        leaseDurationSeconds: opts.leaseDurationSeconds ?? config.leaseDurationSeconds,
        renewIntervalMs: opts.renewIntervalMs,
        retryIntervalMs: opts.retryIntervalMs,
        now: () => opts.ctx.clock.now(),
        logger: logger.child({ component: 'leader-election' }),
        onStartedLeading: () => this.lead(),
        onStoppedLeading: () => this.follow(),
      });
    }
  }

  get isLeader(): boolean {
    return this.session !== undefined;
  }

  /** Leading on a Lease nobody else can hold yet (see LeaderElector.holdsValidLease); always without election. */
  get ownsRefresh(): boolean {
    return this.elector ? this.elector.holdsValidLease : true;
  }

  /** The refresh scheduler of the current term (undefined while following). */
  get scheduler(): RefreshScheduler | undefined {
    return this.session?.scheduler;
  }

  /** Registers the informer handlers and starts campaigning (or leads at once without election). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.watch();
    if (this.elector) this.elector.start();
    else void this.lead();
  }

  /** Stops leading and campaigning. `release: false` leaves the lease to expire (as a crash would). */
  async stop(opts: { release?: boolean } = {}): Promise<void> {
    if (this.elector) await this.elector.stop(opts);
    await this.follow();
    this.started = false;
  }

  /** Counts connections by condition for the `latchkey_connections` gauge. */
  updateConnectionGauge(): void {
    const counts = new Map<string, number>();
    for (const c of this.ctx.store.listAllConnections()) {
      for (const cond of c.status?.conditions ?? []) {
        const k = `${cond.type}\0${cond.status}`;
        counts.set(k, (counts.get(k) ?? 0) + 1);
      }
    }
    this.metrics.connections.reset();
    for (const [k, n] of counts) {
      const [condition, status] = k.split('\0') as [string, string];
      this.metrics.connections.set({ condition, status }, n);
    }
  }

  private lead(): Promise<void> {
    this.transition = this.transition.then(() => {
      if (this.session || !this.started) return;
      this.session = new LeaderSession(this, this.opts, this.metrics);
      this.metrics.leader.set(1);
    });
    return this.transition;
  }

  private follow(): Promise<void> {
    this.transition = this.transition.then(async () => {
      const session = this.session;
      this.session = undefined;
      this.metrics.leader.set(0);
      await session?.stop();
    });
    return this.transition;
  }

  private enqueue(key: string): void {
    this.session?.reconcile.add(key);
  }

  /** Informer events to work-queue keys: each change reaches every object that depends on it. */
  private watch(): void {
    const { store } = this.ctx;
    store.providers.onChange((p) => {
      const name = p.metadata!.name!;
      this.enqueue(`provider:${name}`);
      for (const i of store.integrations.list())
        if (i.spec.provider === name) this.enqueue(`integration:${i.metadata.namespace}/${i.metadata.name}`);
      for (const c of store.listAllConnections()) if (c.spec.provider === name) this.enqueue(`connection:${connectionKey(c)}`);
    });
    store.integrations.onChange((i) => {
      const ns = i.metadata!.namespace!;
      const name = i.metadata!.name!;
      this.enqueue(`integration:${ns}/${name}`);
      for (const c of store.connections.list(ns)) if (c.spec.integration === name) this.enqueue(`connection:${connectionKey(c)}`);
    });
    store.environments.onChange((e) => {
      // Duplicates in a namespace, and secret keys shared across namespaces, are judged against the
      // others: look at every Environment (there is about one per namespace).
      for (const other of store.environments.list()) this.enqueue(`environment:${other.metadata.namespace}/${other.metadata.name}`);
      this.enqueue(`environment:${e.metadata!.namespace}/${e.metadata!.name}`);
    });
    store.connections.on('add', (c) => this.enqueue(`connection:${connectionKey(c)}`));
    store.connections.on('update', (c) => this.enqueue(`connection:${connectionKey(c)}`));
    store.connections.on('delete', (c) => this.onConnectionDeleted(c));
    // A connection's credentials Secret has the connection's name.
    store.credentialSecrets.onChange((s) => this.enqueue(`connection:${s.metadata!.namespace}/${s.metadata!.name}`));
    // A Secret an Integration or Environment refers to changed: check them again.
    store.referencedSecrets.onChange((s) => {
      const ns = s.metadata!.namespace!;
      const name = s.metadata!.name!;
      for (const i of store.listIntegrations(ns))
        if (i.spec.clientSecretRef?.name === name) this.enqueue(`integration:${ns}/${i.metadata.name}`);
      // A secret key shared by two namespaces is judged across namespaces: check every Environment.
      if (store.listEnvironments(ns).some((e) => e.spec.secretRef?.name === name))
        for (const e of store.listEnvironments()) this.enqueue(`environment:${e.metadata.namespace}/${e.metadata.name}`);
    });
  }

  private onConnectionDeleted(c: ConnectionResource): void {
    const key = connectionKey(c);
    this.session?.scheduler.forget(key);
    if (this.session && this.opts.refreshLockName && this.opts.leases?.delete) {
      const [ns, name] = splitKey(key);
      void this.opts.leases.delete(ns, this.opts.refreshLockName(name)).catch(() => undefined);
    }
  }
}
