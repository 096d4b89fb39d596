import type { Clock } from '../../domain/clock.js';
import { fitCredentials } from '../../domain/credentials.js';
import { backoffDelay } from '../../domain/backoff.js';
import { INTEGRATION_SECRET_KEYS } from '../../k8s/resources.js';
import type { CatalogStore, ConnectionStore, StoredConnection, StoredCredentials } from '../../k8s/store.js';
import { apiMessage } from '../../k8s/errors.js';
import type { Logger } from '../../platform/log.js';
import type { Counter } from '../../platform/metrics.js';
import { requestSecrets, secretValues } from '../../oplog/redact.js';
import { RefreshLock, type HeldRefreshLock } from './lock.js';
import { classifyRefreshFailure, RefreshError } from './errors.js';
import type { RefreshReport, RefreshStrategy } from './strategies.js';
import type { OperationLog } from '../../oplog/operation-log.js';
import type { ConnectionStatus } from '../../k8s/resources.js';
import { statusAfterNewCredentials } from '../../domain/connection-state.js';
import { afterAnswer, type RefreshHooks, type RefreshReason } from './refresh-hooks.js';
import { RefreshedCredentials, type KeptCredentials } from './refreshed-credentials.js';

/** Kept credentials written again after 2, 4, then 8 s (and every 8 s after): well within the refresh Lease's TTL, which each attempt renews. */
const KEPT_RETRY_BACKOFF = { baseMs: 2_000, maxMs: 8_000 };

/** How a refresh under the lock is reported: `onAnswered` (see EnsureFreshOptions); `recordStatus` writes the status even for a scheduled refresh. */
export interface HeldRefreshOptions {
  onAnswered?: () => void;
  recordStatus?: boolean;
}

export interface LockedRefreshDeps {
  connections: Pick<ConnectionStore, 'updateCredentials' | 'findConnectionByName' | 'findConnectionIdentity' | 'updateConnection'>;
  catalog: CatalogStore;
  strategies: ReadonlyMap<string, RefreshStrategy>;
  lock: RefreshLock;
  hooks: RefreshHooks;
  config: ConstructorParameters<typeof RefreshedCredentials>[0]['config'];
  logger: Logger;
  clock: Clock;
  fetch: typeof fetch;
  counter?: Counter<'provider' | 'reason' | 'result'>;
  tokenTimeoutSeconds?: number;
  writeAttempts?: number;
  /** Where a strategy's requests besides the token call record their entries (a session step's login). */
  oplog?: OperationLog;
  /** The refreshes under way in this process, by namespace/name (the refresher's: a kept write joins them). */
  inflight: Map<string, Promise<StoredConnection>>;
}

/**
 * A refresh with the connection's refresh Lease held: the token call (ended when the Lease can no
 * longer be kept), its outcome handed to the hooks, the credentials written; and credentials kept
 * after a failed write, written later on their own ({@link writeKept}).
 */
export class LockedRefresh {
  readonly credentials: RefreshedCredentials;

  constructor(private readonly deps: LockedRefreshDeps) {
    this.credentials = new RefreshedCredentials({ ...deps, onKept: (key, kept) => this.writeKeptLater(key, kept) });
  }

  /** Called with the lock held; the credentials come from the informer cache, fenced when written. */
  async run(
    namespace: string,
    conn: StoredConnection,
    strategy: RefreshStrategy,
    reason: RefreshReason,
    held: HeldRefreshLock,
    how: HeldRefreshOptions = {},
  ): Promise<StoredConnection> {
    const { lock } = this.deps;
    let written: string | undefined;
    let keepLock = false;
    try {
      const result = await this.refreshLocked(namespace, conn, strategy, reason, held, how);
      written = result.credentialsVersion;
      return result;
    } catch (err) {
      // Issued credentials not written yet: the Lease stays ours until it expires, so nobody spends the grant again meanwhile.
      keepLock = this.credentials.kept(`${namespace}/${conn.resource.metadata.name}`) !== undefined;
      throw err;
    } finally {
      const name = conn.resource.metadata.name;
      const warn = (err: unknown) => this.deps.logger.warn({ namespace, name, err: apiMessage(err) }, 'could not release refresh lock');
      // Off the request path after a success; awaited after a failure, so a retry right after finds the Lease gone.
      const version = written;
      if (version !== undefined) afterAnswer(() => lock.release(held).catch(warn));
      else if (!keepLock) await lock.release(held).catch(warn);
    }
  }

  private async refreshLocked(
    namespace: string,
    conn: StoredConnection,
    strategy: RefreshStrategy,
    reason: RefreshReason,
    held: HeldRefreshLock,
    { onAnswered = () => undefined, recordStatus = false }: HeldRefreshOptions = {},
  ): Promise<StoredConnection> {
    const { catalog, clock, lock, hooks } = this.deps;
    const providerName = conn.resource.spec.provider;
    // Credentials a provider already issued whose write failed last time: persist them, don't spend the grant again.
    // If the stored ones are already they (a failed attempt had been applied), persisting writes nothing and
    // records the refresh, which would otherwise go unrecorded.
    const unsaved = this.credentials.keptFor(`${namespace}/${conn.resource.metadata.name}`, conn.credentials);
    if (unsaved) {
      onAnswered();
      const report = unsaved.providerValues ? { providerValues: unsaved.providerValues } : {};
      return lock.hold(held, () => this.credentials.write(namespace, unsaved.conn, unsaved.next, reason, held, { recordStatus, report }));
    }
    const started = clock.now();
    // What the token requests carried: a provider that quotes them back must not put them in a failure.
    const sent: string[] = [];
    const report: RefreshReport = {};
    let next: StoredCredentials;
    try {
      const integration = catalog.getIntegration(namespace, conn.resource.spec.integration);
      const provider = catalog.getProvider(providerName);
      if (!integration || !provider) {
        throw new RefreshError(`integration ${conn.resource.spec.integration} or its provider ${providerName} no longer exists`, {
          permanent: true,
          code: 'integration_misconfigured',
        });
      }
      next = await lock.hold(held, async (lost) =>
        // Fitted before the write: credentials too large for their Secret fail here, classified, the stored ones kept.
        fitCredentials(
          await strategy.refresh({
            namespace,
            connection: conn,
            integration,
            provider,
            catalog,
            // The token call ends when the lock can no longer be kept: no other replica may overlap it.
            fetch: (url, init) => {
              sent.push(...requestSecrets(init));
              return this.deps.fetch(url, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, lost]) : lost });
            },
            timeoutSeconds: this.deps.tokenTimeoutSeconds ?? 10,
            now: clock.now(),
            oplog: this.deps.oplog,
            report,
          }),
        ),
      );
    } catch (err) {
      onAnswered();
      const failure = classifyRefreshFailure(
        err,
        clock.now(),
        [...sent, ...this.storedSecrets(namespace, conn)],
        conn.resource.spec.integration,
      );
      this.deps.counter?.inc({ provider: providerName, reason, result: failure.permanent ? 'permanent_failure' : 'transient_failure' });
      const failed = { connection: conn, failure, reason, durationMs: clock.now() - started };
      if (failure.code === 'integration_misconfigured') await hooks.onIntegrationRefused(failed);
      else await hooks.onRefreshFailed(failed);
      throw failure;
    }
    onAnswered();
    // The provider may have rotated the refresh token: from here on the new credentials are the
    // only valid ones, so writing them comes before anything else that could fail.
    const written = await lock.hold(held, () =>
      this.credentials.write(namespace, conn, next, reason, held, { recordStatus, startedAt: started, report }),
    );
    if (!report.failedAfterTokens) return written;
    // New tokens stored, and the refresh failed after them (the session login): reported as the refresh's failure.
    const failure = classifyRefreshFailure(
      report.failedAfterTokens,
      clock.now(),
      [...sent, ...this.storedSecrets(namespace, conn), ...secretValues(written.credentials)],
      conn.resource.spec.integration,
    );
    this.deps.counter?.inc({ provider: providerName, reason, result: failure.permanent ? 'permanent_failure' : 'transient_failure' });
    const { config } = this.deps;
    const now = clock.now();
    const status = (s: ConnectionStatus) => statusAfterNewCredentials(s, written.credentials, config, now, 'refreshed');
    await hooks.onRefreshFailed({ connection: conn, failure, reason, durationMs: now - started, status });
    throw failure;
  }

  private writeKeptLater(key: string, kept: KeptCredentials): void {
    setTimeout(() => void this.writeKept(key, kept), backoffDelay(KEPT_RETRY_BACKOFF, kept.tries)).unref();
  }

  /**
   * Writes credentials kept in memory after their write failed, without waiting for the next refresh of
   * the connection: that may never come to this process. Its shard may move to another replica (a
   * replica joined or left), which waits for the refresh Lease this one keeps and then refreshes with the
   * stored refresh token, already spent: the provider revokes the grant. Each attempt takes the Lease
   * again (renewing it, so the others keep waiting) and writes as a refresh would, fenced on the spent
   * token; a failed write keeps them again, retried a little later. They are written only under the
   * Lease they were kept under: once another replica held it, that one may have spent the stored token
   * (or written newer credentials), and whatever comes next starts from the stored credentials.
   */
  private async writeKept(key: string, kept: KeptCredentials): Promise<void> {
    const { inflight, lock } = this.deps;
    if (this.credentials.kept(key) !== kept) return; // written, kept again (with its own retry), or dropped
    if (inflight.has(key)) return this.writeKeptLater(key, kept); // a refresh of it runs: it writes them first
    const { namespace, conn } = kept;
    const name = conn.resource.metadata.name;
    const drop = (why: string) => {
      this.credentials.drop(key, kept);
      this.deps.logger.warn({ namespace, connection: name, why }, 'refreshed credentials not written; dropped');
    };
    const current = await this.deps.connections.findConnectionIdentity(namespace, name);
    if (!current || current.metadata.uid !== conn.resource.metadata.uid) return drop('the connection was deleted');
    const strategy = this.deps.strategies.get(conn.credentials.type);
    if (!strategy) return drop('no refresh strategy');
    const run = (async () => {
      const taken = await lock.acquire(namespace, name, conn.resource.metadata.uid);
      if (!taken.held || !RefreshLock.sameTenure(kept.held, taken.held)) {
        if (taken.held) await lock.release(taken.held).catch(() => undefined);
        drop('another replica has held the refresh lock since');
        throw new RefreshError('another replica is refreshing this connection; try again', {
          permanent: false,
          code: 'refresh_in_progress',
          retryAfterMs: 1000,
        });
      }
      return this.run(namespace, conn, strategy, kept.reason, taken.held, { recordStatus: true });
    })().finally(() => inflight.delete(key));
    inflight.set(key, run);
    try {
      await run;
    } catch {
      // Kept again (with its own retry), dropped, or the Lease could not be read: in the last case, try again later.
      if (this.credentials.kept(key) === kept) this.writeKeptLater(key, kept);
    }
  }

  /**
   * Secrets a refresh failure's text must not carry besides what the requests sent: the stored
   * credentials' secret fields and the Integration's client secret and private key.
   */
  private storedSecrets(namespace: string, conn: StoredConnection): string[] {
    const { catalog } = this.deps;
    const ref = catalog.getIntegration(namespace, conn.resource.spec.integration)?.spec.clientSecretRef?.name;
    const fromSecret = ref
      ? [INTEGRATION_SECRET_KEYS.clientSecret, INTEGRATION_SECRET_KEYS.privateKey].map((k) => catalog.readSecretValue(namespace, ref, k))
      : [];
    return [...secretValues(conn.credentials), ...fromSecret.filter((v): v is string => Boolean(v))];
  }
}
