import type { Clock } from '../domain/clock.js';
import type { ConnectionEvents } from '../k8s/events.js';
import type { ConnectionResource } from '../k8s/resources.js';
import type { CatalogStore, ConnectionStore, StoredConnection, StoredCredentials } from '../k8s/store.js';
import type { Logger } from '../platform/log.js';
import type { BackoffPolicy } from '../domain/backoff.js';
import { findCondition, IntegrationCondition } from '../domain/conditions.js';
import { failureReason, type ControllerMetrics } from './metrics.js';
import { credentialsExpiry, flooredRefreshTime } from './refresh-timing.js';
import { lastRefreshOf, type RefreshRecord } from '../domain/refresh-floor.js';
import { DeferredStatus } from './deferred-status.js';
import { WorkQueue } from './workqueue.js';
import { REAUTH_VERSION_ANNOTATION, needsReauthorization } from '../auth/refresh/reauthorization.js';
import { UNKNOWN_CONNECTION } from '../auth/refresh/errors.js';
import { hasCode } from '../domain/errors.js';
import { asRefreshFailure, RefreshFailures, type RefreshFailure } from './refresh-failures.js';

/** How far ahead of other work a connection taken over is queued (as if due this much earlier). */
export const TAKEOVER_AHEAD_MS = 60 * 60_000;

/** The shared, cluster-wide single-flight refresh (src/auth/refresh/token-refresher.ts), as the scheduler calls it. */
export type RefreshFn = (
  namespace: string,
  integration: string,
  connectionId: string,
  opts: { reason: 'schedule' | 'request'; force?: boolean; onAnswered?: () => void },
) => Promise<unknown>;

/** When the token of a stored connection should be refreshed next (ms since epoch). */
export type NextRefreshFn = (connection: StoredConnection) => number | undefined;

/** Whether credentials can be renewed at all (the refresher has a strategy and, for OAUTH2, a refresh token). */
export type IsRefreshableFn = (credentials: StoredCredentials) => boolean;

export { REAUTH_VERSION_ANNOTATION, needsReauthorization };
export { asRefreshFailure, type RefreshFailure } from './refresh-failures.js';

export interface RefreshSchedulerOptions {
  connections: Pick<ConnectionStore, 'getConnectionByName' | 'updateConnectionStatus' | 'updateConnection'>;
  catalog: Pick<CatalogStore, 'getIntegration'>;
  refresh: RefreshFn;
  nextRefreshAt: NextRefreshFn;
  isRefreshable: IsRefreshableFn;
  /** Records a Kubernetes Event about the connection and returns its name (the errors' log_id). */
  events: Pick<ConnectionEvents, 'record'>;
  clock: Clock;
  metrics: ControllerMetrics;
  logger: Logger;
  /** Backoff of transient failures (attempts counted in status.refreshAttempts). */
  backoff?: BackoffPolicy;
  /** Never refresh one connection more often than this, whatever the token's lifetime. */
  minIntervalMs?: number;
  /**
   * The refresh floor (ms; 0: off): a token that lived shorter than this since its last refresh is
   * refreshed again no sooner than this after it (src/domain/refresh-floor.ts).
   */
  floorMs?: number;
  /** Told the lifetime of each token a scheduled refresh stored (ms), e.g. to flag short-lived tokens (short-lived-tokens.ts). */
  onRenewed?: (key: string, connection: ConnectionResource, lifetimeMs: number) => Promise<unknown>;
  /** Token calls at a time (default 4); as many refreshes again may be writing their credentials. */
  concurrency?: number;
  /** Told when a connection's refresh state changed, so that the connection reconciler recomputes its conditions. */
  onStateChanged?: (key: string) => void;
  /**
   * Whether this replica may refresh right now (it holds a refresh Lease nobody else can have taken);
   * when not, a due refresh waits a second and asks again. Always true by default.
   */
  mayRefresh?: (key: string) => boolean;
  /** Told once per failed set of credentials that the end user must authorize again (sends the refresh webhook). */
  onReauthorizationRequired?: (connection: ConnectionResource, message: string) => Promise<unknown>;
}

export type Plan = { kind: 'none'; why: string } | { kind: 'at'; at: number; retry: boolean };

/** A successful scheduled refresh whose status is still to be written (see {@link RefreshScheduler.refreshed}). */
export interface RefreshDone {
  at: number;
  credentialsVersion: string;
  /** False when the shared refresh found the token already renewed (by a fetch elsewhere): only the attempts are cleared. */
  renewed: boolean;
}

/**
 * Schedules each expiring connection's refresh at its next refresh time, runs it through the shared
 * refresh, and handles the outcome: success reschedules from the new expiry; a transient failure
 * retries with exponential backoff (at least the provider's Retry-After); a permanent failure stops,
 * records one Event and one `errors` entry, and marks the credentials as refused
 * ({@link REAUTH_VERSION_ANNOTATION}) until they change. One timer per connection, one refresh at a
 * time per connection. After a failure it writes refresh fields only (nextRefreshAt, refreshAttempts,
 * errors); after a success it writes nothing and hands the refresh to the connection reconciler
 * ({@link refreshed}), which writes it with the conditions. Either way it asks for a reconcile
 * (`onStateChanged`): the connection reconciler alone writes a Connection's conditions.
 */
export class RefreshScheduler {
  readonly queue: WorkQueue;
  private readonly minIntervalMs: number;
  /** When this instance last refreshed each key (guards against a refresh loop). */
  private readonly lastAttempt = new Map<string, number>();
  /** This instance's last successful refresh of each key, for the floor until the status says it. */
  private readonly refreshedAt = new Map<string, RefreshRecord>();
  /** Earliest time of the next refresh of a key, after a refresh that renewed nothing. */
  private readonly notBefore = new Map<string, number>();
  /** Keys whose credentials (this Secret version) failed for good, known before the status says so. */
  private readonly failedVersion = new Map<string, string>();
  /** Keys held back because their Integration was unusable (its resourceVersion then): a change lifts it. */
  private readonly integrationHold = new Map<string, string>();
  /** Keys whose token call and credentials write are under way (their outcome asks for a reconcile). */
  private readonly refreshing = new Set<string>();
  /** Successful refreshes whose status the connection reconciler has not written yet. */
  private readonly done = new Map<string, RefreshDone>();
  /** Keys just taken over from another replica, not scheduled since (see {@link takenOver}). */
  private readonly takeovers = new Set<string>();
  /** Successful refreshes whose status write waits for the refreshes waiting for a slot. */
  private readonly deferred: DeferredStatus;
  /** What a failure writes. */
  private readonly failures: RefreshFailures;

  constructor(private readonly opts: RefreshSchedulerOptions) {
    this.minIntervalMs = opts.minIntervalMs ?? 1_000;
    const tokenCalls = opts.concurrency ?? 4;
    this.failures = new RefreshFailures(opts);
    this.deferred = new DeferredStatus({
      flush: (key) => opts.onStateChanged?.(key),
      onSize: (size) => opts.metrics.workqueueDepth.set({ queue: 'deferred-status' }, size),
    });
    this.queue = new WorkQueue({
      name: 'refresh',
      handler: (key, release) => this.handle(key, release),
      concurrency: tokenCalls,
      // The token call holds a slot; the credentials write after it does not (see handle), but as many
      // again at most may be writing, so a slow API server holds back the next token calls.
      released: tokenCalls,
      backoff: { baseMs: 1_000, maxMs: 60_000, jitter: 0.1 },
      logger: opts.logger,
      onDepth: (depth) => {
        opts.metrics.workqueueDepth.set({ queue: 'refresh' }, depth);
        if (depth === 0) this.deferred.release();
      },
    });
  }

  /** Decides when the connection's token should be refreshed (reads the store and this scheduler's holds; writes nothing). */
  plan(conn: StoredConnection | undefined): Plan {
    if (!conn) return { kind: 'none', why: 'gone' };
    const { resource, credentials } = conn;
    if (resource.metadata.deletionTimestamp) return { kind: 'none', why: 'deleting' };
    const key = connectionKey(resource);
    if (credentials.type !== resource.spec.authMode || !this.opts.isRefreshable(credentials)) return { kind: 'none', why: 'not renewable' };
    if (credentialsExpiry(credentials) === undefined) return { kind: 'none', why: 'never expires' };
    if (needsReauthorization(conn) || this.failedVersion.get(key) === conn.credentialsVersion) {
      return { kind: 'none', why: 'needs re-authorization' };
    }
    const integration = this.opts.catalog.getIntegration(resource.metadata.namespace!, resource.spec.integration);
    if (!integration) return { kind: 'none', why: 'integration missing' };
    const held = this.integrationHold.get(key);
    if (held !== undefined && held !== integration.metadata.resourceVersion) {
      this.integrationHold.delete(key);
      this.notBefore.delete(key);
    }
    // A misconfigured integration (say, its Secret lacks the client secret) fails every refresh: wait
    // until it is fixed (its change re-plans every connection of it).
    if (findCondition(integration.status?.conditions, IntegrationCondition.Ready)?.status === 'False') {
      return { kind: 'none', why: 'integration not ready' };
    }
    const margin = this.opts.nextRefreshAt(conn);
    if (margin === undefined) return { kind: 'none', why: 'never expires' };
    // Under the floor, a refresh forced by a caller (fetch, proxy) counts too: it is in lastRefreshedAt.
    const lastRefresh = lastRefreshOf(resource.status, conn.credentialsVersion, this.refreshedAt.get(key));
    const due = flooredRefreshTime(margin, credentials, lastRefresh, this.opts.floorMs ?? 0);
    const now = this.opts.clock.now();
    const attempts = resource.status?.refreshAttempts ?? 0;
    const retryAt = resource.status?.nextRefreshAt ? Date.parse(resource.status.nextRefreshAt) : NaN;
    // After transient failures the token is still due; wait for the backoff written in status.
    if (attempts > 0 && due <= now && Number.isFinite(retryAt) && retryAt > now) return { kind: 'at', at: retryAt, retry: true };
    return { kind: 'at', at: due, retry: attempts > 0 };
  }

  /**
   * The key was just taken over (its owner left the members): if its refresh is overdue when it is next
   * scheduled, it goes ahead of this replica's own overdue refreshes. In a storm every token is due at
   * about the same time, and earliest-due-first alone would leave a dead replica's share behind the
   * survivors' whole backlog, though nobody has been working on it.
   */
  takenOver(key: string): void {
    this.takeovers.add(key);
  }

  /** (Re)arms the connection's timer from its current state. */
  schedule(key: string): Plan {
    const [namespace, name] = splitKey(key);
    const plan = this.plan(this.opts.connections.getConnectionByName(namespace, name));
    if (plan.kind === 'none') {
      this.queue.remove(key);
      this.takeovers.delete(key);
      return plan;
    }
    const at = Math.max(plan.at, this.notBefore.get(key) ?? 0);
    const now = this.opts.clock.now();
    const ahead = this.takeovers.delete(key) && at <= now ? TAKEOVER_AHEAD_MS : 0;
    // Overdue keys keep how long they have been due: the longest-waiting refresh runs first.
    this.queue.reschedule(key, at - now - ahead);
    return { ...plan, at };
  }

  forget(key: string): void {
    this.queue.remove(key);
    this.takeovers.delete(key);
    this.done.delete(key);
    this.deferred.delete(key);
    this.lastAttempt.delete(key);
    this.refreshedAt.delete(key);
    this.notBefore.delete(key);
    this.failedVersion.delete(key);
    this.integrationHold.delete(key);
  }

  async stop(): Promise<void> {
    this.deferred.stop();
    await this.queue.stop();
  }

  private async handle(key: string, release: () => void): Promise<void> {
    const [namespace, name] = splitKey(key);
    const conn = this.opts.connections.getConnectionByName(namespace, name);
    const plan = this.plan(conn);
    if (plan.kind === 'none' || !conn) return;
    const now = this.opts.clock.now();
    const dueAt = Math.max(plan.at, this.notBefore.get(key) ?? 0);
    if (dueAt > now) {
      this.queue.reschedule(key, dueAt - now);
      return;
    }
    const last = this.lastAttempt.get(key);
    if (last !== undefined && now - last < this.minIntervalMs) {
      this.queue.reschedule(key, this.minIntervalMs - (now - last));
      return;
    }
    // A paused process (SIGSTOP, a long GC) resumes with its refresh timers due before its Lease renewal:
    // it must not act on a share another replica may already own.
    if (this.opts.mayRefresh && !this.opts.mayRefresh(key)) {
      this.queue.reschedule(key, 1000);
      return;
    }
    this.lastAttempt.set(key, now);
    const { spec } = conn.resource;
    const provider = spec.provider;
    const log = this.opts.logger.child({ namespace, name, integration: spec.integration, provider });
    this.opts.metrics.refreshAttempts.inc({ provider, reason: plan.retry ? 'retry' : 'schedule' });
    const end = this.opts.metrics.refreshDuration.startTimer({ provider });
    this.refreshing.add(key);
    try {
      // The slot bounds the token calls to providers: it is given back once the provider has answered,
      // and the credentials write (an API round trip that slows as replicas share the API server)
      // runs outside it. The key stays in hand until the write is done.
      await this.opts.refresh(namespace, spec.integration, spec.connectionId, { reason: 'schedule', onAnswered: release });
    } catch (err) {
      this.refreshing.delete(key);
      end();
      if (hasCode(err, UNKNOWN_CONNECTION)) {
        this.forget(key);
        return;
      }
      const failure = asRefreshFailure(err);
      // An earlier success not yet written must not clear the attempts this failure counts.
      this.done.delete(key);
      this.deferred.delete(key);
      // Decide at once, before any await: the refresher's own status write may already be
      // re-planning this key through the reconciler, and must find it held back.
      if (failure.code === 'integration_misconfigured') {
        this.notBefore.set(key, this.opts.clock.now() + 5 * 60_000);
        const integration = this.opts.catalog.getIntegration(namespace, spec.integration);
        if (integration?.metadata.resourceVersion) this.integrationHold.set(key, integration.metadata.resourceVersion);
      } else if (failure.permanent) this.failedVersion.set(key, conn.credentialsVersion);
      else this.notBefore.set(key, this.opts.clock.now() + this.failures.retryDelay(conn, failure));
      this.opts.metrics.refreshFailures.inc({
        provider,
        reason: failureReason(failure.oauthError ?? failure.code, failure.status, failure.permanent),
      });
      if (failure.code === 'integration_misconfigured') this.onIntegrationProblem(key, failure, log);
      else if (failure.permanent) {
        this.queue.remove(key);
        await this.failures.permanent(namespace, name, conn, failure, log);
      } else await this.onTransientFailure(key, conn, failure, log);
      this.opts.onStateChanged?.(key);
      return;
    }
    this.refreshing.delete(key);
    end();
    this.onSuccess(key, conn, log);
    // While refreshes wait for a slot, theirs go first: this one's status write waits for them
    // (its credentials are stored already; src/controller/deferred-status.ts).
    if (this.queue.depth > 0 && this.done.has(key)) this.deferred.hold(key);
    else {
      this.deferred.delete(key);
      this.opts.onStateChanged?.(key);
    }
  }

  /** A refresh succeeded: re-arms the timer; the connection reconciler writes the status ({@link refreshed}), not the refresher. */
  private onSuccess(key: string, before: StoredConnection, log: Logger): void {
    const [namespace, name] = splitKey(key);
    const fresh = this.opts.connections.getConnectionByName(namespace, name);
    if (!fresh) return;
    const now = this.opts.clock.now();
    const renewed =
      credentialsExpiry(fresh.credentials) !== credentialsExpiry(before.credentials) ||
      fresh.credentialsVersion !== before.credentialsVersion;
    this.done.set(key, { at: now, credentialsVersion: fresh.credentialsVersion, renewed });
    const expiry = credentialsExpiry(fresh.credentials);
    if (renewed) {
      this.refreshedAt.set(key, { at: now, credentialsVersion: fresh.credentialsVersion });
      if (expiry !== undefined)
        void this.opts
          .onRenewed?.(key, fresh.resource, expiry - now)
          .catch((err: unknown) => log.warn({ err: String(err) }, 'could not report the token lifetime'));
    }
    // Planned with the attempts already cleared (the reconciler writes that).
    const plan = this.plan({ ...fresh, resource: { ...fresh.resource, status: { ...fresh.resource.status, refreshAttempts: 0 } } });
    if (plan.kind === 'at') {
      // A "success" that left the token as it was (the shared refresh found nothing to do) must not
      // turn into a loop: never sooner than the minimum interval.
      const at = Math.max(plan.at, now + this.minIntervalMs);
      if (at > plan.at) this.notBefore.set(key, at);
      else this.notBefore.delete(key);
      this.queue.reschedule(key, at - now);
    } else {
      this.queue.remove(key);
    }
    log.debug({ renewed }, 'scheduled refresh done');
  }

  /** Whether the key's refresh is under way: its outcome asks for a reconcile (`onStateChanged`) when it is known. */
  isRefreshing(key: string): boolean {
    return this.refreshing.has(key);
  }

  /** Whether the status write of the key's refresh is held back: it asks for a reconcile (`onStateChanged`) when released. */
  isStatusDeferred(key: string): boolean {
    return this.deferred.has(key);
  }

  /** Successful refreshes whose status write is held back. */
  get deferredStatusWrites(): number {
    return this.deferred.size;
  }

  /** The key's last successful refresh whose status is not written yet, for the connection reconciler to write. */
  refreshed(key: string): RefreshDone | undefined {
    return this.done.get(key);
  }

  /** The reconciler wrote (or found written) the status of that refresh. */
  recorded(key: string, done: RefreshDone): void {
    if (this.done.get(key) === done) this.done.delete(key);
  }

  /** A refresh made outside the schedule (a binding's, a request's) refused for good: recorded as the schedule's own refusal. */
  async refusedOutsideSchedule(key: string, conn: StoredConnection, err: unknown): Promise<void> {
    const failure = asRefreshFailure(err);
    if (!failure.permanent || failure.code === 'integration_misconfigured' || this.refreshing.has(key)) return;
    this.failedVersion.set(key, conn.credentialsVersion);
    this.queue.remove(key);
    const [namespace, name] = splitKey(key);
    const log = this.opts.logger.child({ namespace, name, provider: conn.resource.spec.provider });
    await this.failures.permanent(namespace, name, conn, failure, log);
    this.opts.onStateChanged?.(key);
  }

  private async onTransientFailure(key: string, conn: StoredConnection, failure: RefreshFailure, log: Logger): Promise<void> {
    const [namespace, name] = splitKey(key);
    const attempts = (conn.resource.status?.refreshAttempts ?? 0) + 1;
    const at = this.notBefore.get(key) ?? this.opts.clock.now() + this.failures.retryDelay(conn, failure);
    const delay = Math.max(0, at - this.opts.clock.now());
    log.warn(
      { attempts, retryInMs: delay, reason: failureReason(failure.oauthError ?? failure.code, failure.status, false) },
      'token refresh failed; retrying',
    );
    await this.failures.transient(namespace, name, conn, at);
    this.queue.reschedule(key, delay);
  }

  /** The integration is at fault, not the grant: wait for it to change (its connections are re-planned then), or five minutes. */
  private onIntegrationProblem(key: string, failure: RefreshFailure, log: Logger): void {
    log.warn({ err: failure.message }, 'refresh impossible until the integration is fixed');
    const retry = this.opts.clock.now() + 5 * 60_000;
    this.notBefore.set(key, retry);
    this.queue.reschedule(key, retry - this.opts.clock.now());
  }
}

export function connectionKey(resource: Pick<ConnectionResource, 'metadata'>): string {
  return `${resource.metadata.namespace}/${resource.metadata.name}`;
}

export function splitKey(key: string): [string, string] {
  const i = key.indexOf('/');
  return [key.slice(0, i), key.slice(i + 1)];
}
