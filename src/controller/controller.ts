import type { ConnectionUpkeep, StoredConnection, StoredCredentials } from '../k8s/store.js';
import type { AppContext } from '../context/app-context.js';
import type { ConnectionIdentity } from '../k8s/resources.js';
import { ConnectionReconciler } from './reconcilers/connection.js';
import { EnvironmentReconciler } from './reconcilers/environment.js';
import { IntegrationReconciler } from './reconcilers/integration.js';
import { LeaderElector, type LeaseClient } from './leader-election.js';
import { ShardMembership, type ShardLeaseClient } from './shard-membership.js';
import { LABELS } from '../k8s/resources.js';
import { controllerMetrics, type ControllerMetrics } from './metrics.js';
import { ProviderReconciler } from './reconcilers/provider.js';
import {
  connectionKey,
  RefreshScheduler,
  splitKey,
  TAKEOVER_AHEAD_MS,
  type RefreshFn,
  type RefreshSchedulerOptions,
} from './refresh-scheduler.js';
import { refreshTime } from './refresh-timing.js';
import { Sweeper } from './sweeper.js';
import { WorkQueue } from './workqueue.js';
import { enqueueRefreshFailedWebhook } from '../webhooks/auth-webhooks.js';
import { EnvironmentKeys } from '../auth/environment-keys.js';
import { PeriodicResync } from './periodic-resync.js';
import { ShortLivedTokens, type ShortLivedTokensEvents } from './short-lived-tokens.js';
import { RefreshRequests } from './refresh-requests.js';
import type { CredentialBindings } from '../k8s/credential-bindings.js';
import { BindingSync } from './binding-sync.js';
import { CredentialBindingReconciler } from './reconcilers/credential-binding.js';

/** The parts of the shared refresher (TokenRefresher of src/auth/refresh/token-refresher.ts) the controller uses. */
export interface Refresher {
  /** A scheduled refresh, or a binding's (its own margin; `force` to mint a missing token): the stored connection after it. */
  ensureFresh(
    namespace: string,
    integration: string,
    connectionId: string,
    opts: Parameters<RefreshFn>[3] | { reason: 'binding'; force?: boolean; marginSeconds?: number },
  ): Promise<StoredConnection>;
  isRefreshable(credentials: StoredCredentials): boolean;
  renewsAhead(credentials: StoredCredentials): boolean;
}

export interface ControllerOptions {
  ctx: AppContext;
  refresher: Refresher;
  /** Events on Connections, and on Integrations when it can record those (a provider answering short-lived tokens). */
  events: RefreshSchedulerOptions['events'] & { recordIntegration?: ShortLivedTokensEvents['recordIntegration'] };
  /** CredentialBindings (started); none: bindings are not synced by this controller. */
  bindings?: CredentialBindings;
  /** Leases (src/k8s/leases.ts) for leader election; required unless leader election is off. */
  leases?: LeaseClient & ShardLeaseClient;
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
  /**
   * Called when the connection queue empties after a wave of at least `reconcileWave` reconciles
   * begun at start-up or by a rebalance (not by the periodic resync): the garbage of such a wave is
   * what a heap compaction frees.
   */
  afterReconcileWave?: () => void;
  /** Reconciles that make a wave; {@link RECONCILE_WAVE} by default. */
  reconcileWave?: number;
}

/** Reconciles that make a wave for {@link ControllerOptions.afterReconcileWave}. */
export const RECONCILE_WAVE = 1000;

/**
 * This replica's share of the connections while its shard membership is active: the connection
 * reconciler, the refresh scheduler and the sweeper, each only for the connections it owns.
 */
class ShardSession {
  readonly reconcile: WorkQueue;
  readonly scheduler: RefreshScheduler;
  /** The CredentialBindings of this share's connections (none without {@link ControllerOptions.bindings}). */
  readonly bindings: BindingSync | undefined;
  private readonly sweeper: Sweeper;
  /** Shard labels written, half-made connections swept. */
  private readonly upkeep: ConnectionUpkeep;
  private readonly resync: PeriodicResync;
  /** A wave (start-up or rebalance, not a periodic resync) is being reconciled; keys handled since it began. */
  private waveOpen = false;
  private reconciledInWave = 0;
  private stopped = false;
  /** A scan of every identity runs ({@link scanOwned}), and whether another was asked for meanwhile. */
  private scanning = false;
  private scanAgain: { wave?: boolean; rebalance?: boolean } | undefined;

  constructor(
    private readonly controller: Controller,
    opts: ControllerOptions,
    metrics: ControllerMetrics,
    /** The shard label value this replica writes (undefined: not sharded, one controller owns everything). */
    private readonly shard: string | undefined,
  ) {
    const { ctx } = opts;
    const { connections: connectionStore, catalog, clock, logger } = ctx;
    const { catalogStatus } = ctx;
    this.upkeep = ctx.connectionUpkeep;
    const floorMs = ctx.config.refreshFloorSeconds * 1000;
    const recordIntegration = opts.events.recordIntegration?.bind(opts.events);
    const shortLived = new ShortLivedTokens({
      catalog,
      catalogStatus,
      events: recordIntegration ? { recordIntegration } : undefined,
      floorMs,
      now: () => clock.now(),
      logger: logger.child({ component: 'refresh-scheduler' }),
    });
    this.scheduler = new RefreshScheduler({
      connections: connectionStore,
      catalog,
      refresh: (ns, integration, id, o) => opts.refresher.ensureFresh(ns, integration, id, o),
      nextRefreshAt: (conn: StoredConnection) => refreshTime(conn.credentials, ctx.config),
      // Only what the strategy wants renewed ahead (locally minted JWTs are made when used).
      isRefreshable: (c) => opts.refresher.renewsAhead(c),
      events: opts.events,
      clock,
      metrics,
      logger: logger.child({ component: 'refresh-scheduler' }),
      backoff: opts.refreshBackoff,
      floorMs,
      onRenewed: (key, connection, lifetimeMs) => shortLived.observe(key, connection, lifetimeMs),
      concurrency: opts.refreshConcurrency ?? ctx.config.refreshConcurrency,
      onStateChanged: (key) => this.reconcile.add(key),
      mayRefresh: (key) => this.controller.owns(key),
      onReauthorizationRequired: (connection, message) =>
        enqueueRefreshFailedWebhook(ctx, connection, { type: 'reauthorization_required', message }),
    });
    /**
     * A refresh outside the schedule: a permanent refusal it meets is recorded as the schedule's own
     * (the connection marked for re-authorization), not left for the schedule to meet again.
     */
    const outsideSchedule: Refresher['ensureFresh'] = async (ns, integration, id, o) => {
      const before = connectionStore.getConnection(ns, integration, id);
      try {
        return await opts.refresher.ensureFresh(ns, integration, id, o);
      } catch (err) {
        if (before)
          await this.scheduler
            .refusedOutsideSchedule(connectionKey(before.resource), before, err)
            .catch((e: unknown) => logger.warn({ namespace: ns, err: String(e) }, 'could not record the refusal for re-authorization'));
        throw err;
      }
    };
    const requests = new RefreshRequests({
      connections: connectionStore,
      refresh: (ns, integration, id, o) => outsideSchedule(ns, integration, id, o),
      isRefreshable: (c) => opts.refresher.isRefreshable(c),
      events: opts.events,
      clock,
      logger: logger.child({ component: 'refresh-requests' }),
      onDone: (key) => this.reconcile.add(key),
    });
    const connections = new ConnectionReconciler({
      connections: connectionStore,
      catalog,
      clock,
      schedule: (key) => this.scheduler.schedule(key),
      forget: (key) => this.scheduler.forget(key),
      isRefreshable: (c) => opts.refresher.isRefreshable(c),
      renewsAhead: (c) => opts.refresher.renewsAhead(c),
      revisitAt: (key, at) => this.reconcile.addAfter(key, at - clock.now()),
      settings: ctx.config,
      refreshed: (key) => this.scheduler.refreshed(key),
      recorded: (key, done) => this.scheduler.recorded(key, done),
    });
    this.reconcile = new WorkQueue({
      name: 'reconcile',
      concurrency: opts.reconcileConcurrency ?? 4,
      logger: logger.child({ component: 'reconcile' }),
      onTerminal: () => metrics.workqueueTerminal.inc({ queue: 'reconcile' }),
      onDepth: (depth) => {
        metrics.workqueueDepth.set({ queue: 'reconcile' }, depth);
        if (depth === 0 && this.waveOpen && this.reconciledInWave >= (opts.reconcileWave ?? RECONCILE_WAVE)) {
          this.waveOpen = false;
          opts.afterReconcileWave?.();
        }
      },
      handler: async (key) => {
        this.reconciledInWave += 1;
        // Ownership may have moved since the key was queued.
        if (!this.controller.owns(key)) {
          this.scheduler.forget(key);
          return;
        }
        // Its refresh is under way (or its status write held back) and asks for a reconcile once its
        // outcome is known (onStateChanged): a reconcile now (its Secret just changed) would write a
        // status that one would write again.
        if (this.scheduler.isRefreshing(key) || this.scheduler.isStatusDeferred(key)) return;
        const [ns, name] = splitKey(key);
        if (this.shard) await this.label(key, ns, name, this.shard);
        const resource = connectionStore.connectionResource(ns, name);
        if (resource && !resource.metadata.deletionTimestamp) await requests.handle(key, resource);
        return connections.reconcile(ns, name);
      },
    });
    if (opts.bindings) {
      const reconciler = new CredentialBindingReconciler({
        bindings: opts.bindings,
        connections: connectionStore,
        catalog,
        refresh: (ns, integration, id, o) => outsideSchedule(ns, integration, id, { ...o, reason: 'binding' }),
        isRefreshable: (c) => opts.refresher.isRefreshable(c),
        settings: ctx.config,
        clock,
        logger: logger.child({ component: 'credential-bindings' }),
      });
      this.bindings = new BindingSync({
        bindings: opts.bindings,
        reconciler,
        owns: (key) => this.controller.ownsBindingsOf(key),
        logger,
        metrics,
      });
      this.bindings.enqueueOwned();
    }
    this.sweeper = new Sweeper({
      connectionUpkeep: {
        sweepIncompleteConnections: (age, now) => this.upkeep.sweepIncompleteConnections(age, now, (k) => this.controller.owns(k)),
      },
      logger,
      intervalMs: opts.sweepIntervalMs,
      now: () => clock.now(),
    });
    this.sweeper.start();
    this.resync = new PeriodicResync({
      // 30 minutes by default: at 33,000 connections a replica, a resync is minutes of no-op reconciles
      // (every 5 minutes it kept a replica busy and growing after its wave; docs/benchmarks.md).
      intervalMs: opts.resyncIntervalMs ?? ctx.config.resyncSeconds * 1000,
      queued: () => this.reconcile.depth,
      resync: () => void this.enqueueOwned(),
    });
    this.scanOwned({ wave: true });
  }

  /**
   * Writes this replica's shard label on an owned connection and its Secret (the Secret then enters
   * this replica's label-selected cache). A Secret not written yet (a creation in flight) is looked
   * for again shortly, for as long as the sweeper leaves such a connection alone.
   */
  private async label(key: string, ns: string, name: string, shard: string): Promise<void> {
    const { connections, caches } = this.controller.ctx;
    const c = await connections.findConnectionIdentity(ns, name);
    if (!c || c.metadata.deletionTimestamp) return;
    const secretLabel = caches.watched.credentialSecrets.get(name, ns)?.metadata?.labels?.[LABELS.shard];
    if (c.metadata.labels?.[LABELS.shard] === shard && secretLabel === shard) return;
    const { secret } = await this.upkeep.labelShard(ns, name, shard, c);
    const age = this.controller.ctx.clock.now() - Date.parse(String(c.metadata.creationTimestamp ?? ''));
    if (!secret && age < SWEEP_AGE_MS) this.reconcile.addAfter(key, 2_000);
  }

  /**
   * Queues every connection this replica owns; forgets the refreshes of those it no longer owns.
   * `wave`: at start-up or after a rebalance (see {@link ControllerOptions.afterReconcileWave});
   * `rebalance`: the members changed, and connections this replica kept need no reconcile for it.
   */
  async enqueueOwned(opts: { wave?: boolean; rebalance?: boolean; scan?: boolean } = {}): Promise<void> {
    if (opts.wave) {
      this.waveOpen = true;
      this.reconciledInWave = 0;
    }
    const now = Date.now();
    const { caches, connectionScans } = this.controller.ctx;
    const visit = (c: ConnectionIdentity) => {
      if (this.stopped) return;
      const key = connectionKey(c);
      if (this.controller.owns(key)) {
        const labelled = this.shard === undefined || c.metadata.labels?.[LABELS.shard] === this.shard;
        // After a rebalance, a connection this replica kept (labelled for it, its refresh still
        // tracked) has nothing new to reconcile: its no-op reconcile would only delay the share taken over.
        if (opts.rebalance && labelled && this.scheduler.queue.holds(key)) return;
        if (labelled) this.reconcile.add(key, now);
        else this.enqueueTakenOver(key);
      } else {
        this.scheduler.forget(key);
        this.reconcile.remove(key);
      }
    };
    // A sharded replica keeps whole only its share: a periodic resync walks that; start-up, a
    // rebalance or a watch that lost history read every identity from the API server (page by
    // page, none kept) to find what it owns now.
    if (opts.scan || caches.connectionShard === undefined) await connectionScans.scanConnectionIdentities(visit);
    else for (const c of caches.watched.connections.list()) visit(c);
  }

  /**
   * {@link enqueueOwned} with every identity read, tried again until it gets through (the API server
   * may be away). One scan at a time: asked again meanwhile, it runs once more after.
   */
  scanOwned(opts: { wave?: boolean; rebalance?: boolean }): void {
    if (this.scanning) {
      this.scanAgain = { wave: this.scanAgain?.wave || opts.wave, rebalance: this.scanAgain?.rebalance || opts.rebalance };
      return;
    }
    this.scanning = true;
    let retry = false;
    this.enqueueOwned({ ...opts, scan: true })
      .catch((err: unknown) => {
        retry = true;
        this.controller.ctx.logger.warn(
          { err: err instanceof Error ? err.message : String(err) },
          'reading the connections to own failed; trying again',
        );
      })
      .finally(() => {
        this.scanning = false;
        if (this.stopped) return;
        const again = retry ? { ...opts, ...this.scanAgain } : this.scanAgain;
        this.scanAgain = undefined;
        if (again) setTimeout(() => this.scanOwned(again), retry ? 2000 : 0).unref();
      });
  }

  /**
   * Queues a connection just taken over ahead of other work: a dead replica's tokens may be due, and
   * each needs its label (and its Secret in this replica's cache) before it can be refreshed; its
   * refresh then goes ahead of this replica's own overdue ones too.
   */
  enqueueTakenOver(key: string): void {
    this.scheduler.takenOver(key);
    this.reconcile.add(key, Date.now() - TAKEOVER_AHEAD_MS);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.resync.stop();
    await Promise.all([this.reconcile.stop(), this.scheduler.stop(), this.sweeper.stop(), this.bindings?.stop()]);
  }
}

/** Connections younger than this may still be getting their Secret written (the sweeper's age). */
const SWEEP_AGE_MS = 5 * 60_000;

/**
 * One term as leader: the reconcilers of the cluster-wide singletons (Providers, Integrations,
 * Environments), whose status one writer keeps. Connections are sharded ({@link ShardSession}).
 */
class LeaderSession {
  readonly reconcile: WorkQueue;
  private readonly resync: PeriodicResync;

  constructor(
    private readonly controller: Controller,
    opts: ControllerOptions,
    metrics: ControllerMetrics,
  ) {
    const { catalog, clock, logger } = opts.ctx;
    const store = { catalog, catalogStatus: opts.ctx.catalogStatus };
    const providers = new ProviderReconciler(store, clock);
    const integrations = new IntegrationReconciler(store, clock, opts.ctx.config.publicBaseUrl);
    const environments = new EnvironmentReconciler(store, clock, new EnvironmentKeys(catalog), opts.ctx.egress);
    this.reconcile = new WorkQueue({
      name: 'reconcile-singletons',
      concurrency: opts.reconcileConcurrency ?? 4,
      logger: logger.child({ component: 'reconcile' }),
      onDepth: (depth) => metrics.workqueueDepth.set({ queue: 'reconcile-singletons' }, depth),
      onTerminal: () => metrics.workqueueTerminal.inc({ queue: 'reconcile-singletons' }),
      handler: async (key) => {
        const i = key.indexOf(':');
        const kind = key.slice(0, i);
        const rest = key.slice(i + 1);
        if (kind === 'provider') return providers.reconcile(rest);
        const [ns, name] = splitKey(rest);
        if (kind === 'integration') return integrations.reconcile(ns, name);
        if (kind === 'environment') return environments.reconcile(ns, name);
      },
    });
    this.resync = new PeriodicResync({
      intervalMs: opts.resyncIntervalMs ?? opts.ctx.config.resyncSeconds * 1000,
      queued: () => this.reconcile.depth,
      resync: () => this.enqueueAll(),
    });
    this.enqueueAll();
  }

  enqueueAll(): void {
    const { catalog } = this.controller.ctx;
    for (const p of catalog.listProviders()) this.reconcile.add(`provider:${p.metadata.name}`);
    for (const i of catalog.integrations.list()) this.reconcile.add(`integration:${i.metadata.namespace}/${i.metadata.name}`);
    for (const e of catalog.environments.list()) this.reconcile.add(`environment:${e.metadata.namespace}/${e.metadata.name}`);
  }

  async stop(): Promise<void> {
    this.resync.stop();
    await this.reconcile.stop();
  }
}

/**
 * The controller. Every replica is active on its share of the connections: a shard Lease per replica
 * ({@link ShardMembership}) and consistent hashing decide which connections it reconciles, refreshes
 * and sweeps. The replica holding the leader Lease also reconciles the singletons (Providers,
 * Integrations, Environments). Without leader election (one controller) it owns everything.
 */
export class Controller {
  readonly ctx: AppContext;
  readonly metrics: ControllerMetrics;
  private readonly elector: LeaderElector | undefined;
  /** Undefined without leader election: this single controller owns every connection. */
  readonly membership: ShardMembership | undefined;
  private leader: LeaderSession | undefined;
  private shard: ShardSession | undefined;
  private started = false;
  private transition: Promise<void> = Promise.resolve();
  /** A Connection or the members changed since the gauge was last counted. */
  private gaugeStale = true;

  constructor(private readonly opts: ControllerOptions) {
    this.ctx = opts.ctx;
    this.metrics = controllerMetrics(opts.ctx.metrics);
    this.metrics.leader.set(0);
    const { config, logger } = opts.ctx;
    if (opts.leaderElection ?? config.leaderElection) {
      if (!opts.leases) throw new Error('leader election needs a Leases client');
      const identity = opts.identity ?? config.identity;
      const namespace = opts.leaseNamespace ?? config.leaseNamespace;
      const leaseDurationSeconds = opts.leaseDurationSeconds ?? config.leaseDurationSeconds;
      this.elector = new LeaderElector({
        leases: opts.leases,
        namespace,
        name: opts.leaseName ?? config.leaseName,
        identity,
        leaseDurationSeconds,
        renewIntervalMs: opts.renewIntervalMs,
        retryIntervalMs: opts.retryIntervalMs,
        now: () => opts.ctx.clock.now(),
        logger: logger.child({ component: 'leader-election' }),
        onStartedLeading: () => this.lead(),
        onStoppedLeading: () => this.follow(),
      });
      this.membership = new ShardMembership({
        leases: opts.leases,
        namespace,
        identity,
        leaseDurationSeconds,
        renewIntervalMs: opts.renewIntervalMs,
        now: () => opts.ctx.clock.now(),
        logger: logger.child({ component: 'shard-membership' }),
        onChange: () => void this.rebalance(),
      });
    }
  }

  get isLeader(): boolean {
    return this.leader !== undefined;
  }

  /** The refresh scheduler of this replica's share (undefined while its membership is not active). */
  get scheduler(): RefreshScheduler | undefined {
    return this.shard?.scheduler;
  }

  /** Whether this replica owns the connection `namespace/name` now. */
  owns(key: string): boolean {
    return this.membership ? this.membership.owns(key) : this.started;
  }

  /**
   * Whether this replica syncs the CredentialBindings of the connection `namespace/name`: it owns the
   * connection, in a namespace it watches (a binding naming any other is some other installation's).
   */
  ownsBindingsOf(key: string): boolean {
    const watched = this.ctx.config.watchNamespaces;
    return this.owns(key) && (watched.length === 0 || watched.includes(key.slice(0, key.indexOf('/'))));
  }

  /** Registers the informer handlers and starts campaigning (or leads and owns everything at once without election). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.watch();
    if (this.elector) {
      this.elector.start();
      this.membership!.start();
    } else {
      void this.lead();
      void this.rebalance();
    }
  }

  /** Stops leading, owning and campaigning. `release: false` leaves the Leases to expire (as a crash would). */
  async stop(opts: { release?: boolean } = {}): Promise<void> {
    // Stop acting first; the Leases are released only after that.
    this.started = false;
    await this.rebalance();
    await Promise.all([this.elector?.stop(opts), this.membership?.stop(opts)]);
    await this.follow();
  }

  /**
   * Counts connections by condition for the `latchkey_connections` gauge (this replica's share when
   * sharded), before each scrape, but only when a Connection or the members changed since the last count:
   * counting walks every cached Connection, which at 33,000 per replica cost a full pass (and its
   * garbage) per scrape of a replica that had nothing to do.
   */
  updateConnectionGauge(): void {
    if (!this.gaugeStale) return;
    this.gaugeStale = false;
    const counts = new Map<string, number>();
    // Whole Connections: this replica's share when sharded (the store caches only those whole).
    for (const c of this.ctx.caches.watched.connections.list()) {
      if (this.membership && !this.owns(connectionKey(c))) continue;
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
      if (this.leader || !this.started) return;
      this.leader = new LeaderSession(this, this.opts, this.metrics);
      this.metrics.leader.set(1);
    });
    return this.transition;
  }

  private follow(): Promise<void> {
    this.transition = this.transition.then(async () => {
      const session = this.leader;
      this.leader = undefined;
      this.metrics.leader.set(0);
      await session?.stop();
    });
    return this.transition;
  }

  /** Membership changed: start or stop this replica's share, or hand connections over. */
  private rebalance(): Promise<void> {
    this.gaugeStale = true;
    this.transition = this.transition.then(async () => {
      const active = this.started && (this.membership ? this.membership.active : true);
      if (!active) {
        const session = this.shard;
        this.shard = undefined;
        await session?.stop();
        return;
      }
      if (!this.shard) this.shard = new ShardSession(this, this.opts, this.metrics, this.membership?.identity);
      else {
        this.shard.scanOwned({ wave: true, rebalance: true });
        this.shard.bindings?.enqueueOwned();
      }
    });
    return this.transition;
  }

  private enqueue(key: string): void {
    this.leader?.reconcile.add(key);
  }

  /** Queues a reconcile of an owned connection; `takenOver`: ahead of other work ({@link ShardSession.enqueueTakenOver}). */
  private enqueueConnection(key: string, takenOver = false): void {
    if (!this.shard || !this.owns(key)) return;
    this.shard.bindings?.connectionChanged(key);
    if (takenOver) this.shard.enqueueTakenOver(key);
    else this.shard.reconcile.add(key);
  }

  /** Informer events to work-queue keys: each change reaches every object that depends on it. */
  private watch(): void {
    const { caches: store, catalog } = this.ctx;
    // A controller walks its caches: a bounded store (a server's) has none, and `watched` refuses it here.
    const { connections, credentialSecrets } = store.watched;
    store.providers.onChange((p) => {
      const name = p.metadata!.name!;
      this.enqueue(`provider:${name}`);
      // Integrations and connections may name the Provider by one of its aliases.
      const names = new Set([name, ...(p.spec?.aliases ?? [])]);
      for (const i of store.integrations.list())
        if (names.has(i.spec.provider)) this.enqueue(`integration:${i.metadata.namespace}/${i.metadata.name}`);
      for (const c of store.watched.connections.list()) if (names.has(c.spec.provider)) this.enqueueConnection(connectionKey(c));
    });
    store.integrations.onChange((i) => {
      const ns = i.metadata!.namespace!;
      const name = i.metadata!.name!;
      this.enqueue(`integration:${ns}/${name}`);
      for (const c of store.watched.connections.list(ns)) if (c.spec.integration === name) this.enqueueConnection(connectionKey(c));
    });
    if (this.opts.bindings) {
      const bindings = this.opts.bindings.cache;
      bindings.on('add', (b) => this.shard?.bindings?.bindingChanged(b, 'add'));
      bindings.on('update', (b) => this.shard?.bindings?.bindingChanged(b, 'update'));
      bindings.on('delete', (b) => this.shard?.bindings?.bindingChanged(b, 'delete'));
    }
    store.environments.onChange((e) => {
      // Who may bind this namespace's connections may have changed.
      this.shard?.bindings?.environmentChanged(e.metadata!.namespace!);
      // Duplicates in a namespace, and secret keys shared across namespaces, are judged against the
      // others: look at every Environment (there is about one per namespace).
      for (const other of store.environments.list()) this.enqueue(`environment:${other.metadata.namespace}/${other.metadata.name}`);
      this.enqueue(`environment:${e.metadata!.namespace}/${e.metadata!.name}`);
    });
    connections.onChange(() => (this.gaugeStale = true));
    // Every Connection: a new one, a change (a shard label too) or a deletion reaches its owner. Sharded,
    // from a metadata-only watch that keeps nothing (and whose lost history means reading them all again).
    if (store.connectionIndex) {
      const index = store.connectionIndex;
      index.on('add', (c) => this.enqueueConnection(connectionKey(c)));
      index.on('update', (c) => this.enqueueConnection(connectionKey(c)));
      index.on('delete', (c) => this.onConnectionDeleted(connectionKey(c)));
    }
    for (const feed of store.connectionChanges) {
      feed.onChange((c) => {
        const key = `${c.namespace}/${c.name}`;
        if (c.deleted) this.onConnectionDeleted(key);
        else this.enqueueConnection(key);
      });
      feed.onReset(() => this.shard?.scanOwned({}));
    }
    if (store.connectionShard) {
      // Sharded: whole Connections come in (labelled for this replica) and go (labelled for another)
      // on their own watch, which can trail the identities': each arrival is reconciled again, ahead
      // of other work (it was just labelled for this replica: taken over, its refresh may be due).
      connections.on('add', (c) => this.enqueueConnection(connectionKey(c), true));
      connections.on('update', (c) => this.enqueueConnection(connectionKey(c)));
      connections.on('delete', (c) => this.shard?.scheduler.forget(connectionKey(c)));
    }
    // A connection's credentials Secret has the connection's name. One arriving in a sharded cache was
    // just labelled for this replica (taken over): it goes ahead, its refresh may be due.
    const secretKey = (s: { metadata?: { namespace?: string; name?: string } }) => `${s.metadata!.namespace}/${s.metadata!.name}`;
    credentialSecrets.on('add', (s) => this.enqueueConnection(secretKey(s), store.connectionShard !== undefined));
    credentialSecrets.on('update', (s) => this.enqueueConnection(secretKey(s)));
    credentialSecrets.on('delete', (s) => this.enqueueConnection(secretKey(s)));
    // A Secret an Integration or Environment refers to changed: check them again.
    store.referencedSecrets.onChange((s) => {
      const ns = s.metadata!.namespace!;
      const name = s.metadata!.name!;
      for (const i of catalog.listIntegrations(ns))
        if (i.spec.clientSecretRef?.name === name || i.spec.clientCertificateRef?.name === name)
          this.enqueue(`integration:${ns}/${i.metadata.name}`);
      // A secret key shared by two namespaces is judged across namespaces: check every Environment.
      if (catalog.listEnvironments(ns).some((e) => e.spec.secretRef?.name === name))
        for (const e of catalog.listEnvironments()) this.enqueue(`environment:${e.metadata.namespace}/${e.metadata.name}`);
    });
  }

  private onConnectionDeleted(key: string): void {
    this.shard?.scheduler.forget(key);
    this.shard?.bindings?.connectionChanged(key);
    // The owner removes the refresh lock (the garbage collector would too, later).
    if (this.shard && this.owns(key) && this.opts.refreshLockName && this.opts.leases?.delete) {
      const [ns, name] = splitKey(key);
      void this.opts.leases.delete(ns, this.opts.refreshLockName(name)).catch(() => undefined);
    }
  }
}
