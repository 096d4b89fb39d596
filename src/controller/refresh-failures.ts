import type { Clock } from '../domain/clock.js';
import type { ConnectionEvents } from '../k8s/events.js';
import { backoffDelay, type BackoffPolicy } from '../domain/backoff.js';
import { ConnectionReason } from '../domain/conditions.js';
import { ConnectionStatusWriter } from '../domain/connection-status-writers.js';
import type { ConnectionResource, ConnectionStatus } from '../k8s/resources.js';
import type { ConnectionStore, StoredConnection } from '../k8s/store.js';
import type { Logger } from '../platform/log.js';
import { REAUTH_VERSION_ANNOTATION, needsReauthorization, reauthorizationMessage } from '../auth/refresh/reauthorization.js';
import { failureReason } from './metrics.js';

/** What a refresh failure tells the scheduler (read by its fields: RefreshError of src/auth/refresh/errors.ts). */
export interface RefreshFailure {
  permanent: boolean;
  retryAfterMs?: number;
  /** The refresher's classification (reauthorization_required, provider_unavailable, ...). */
  code?: string;
  /** The OAuth error the provider answered (invalid_grant...). */
  oauthError?: string;
  status?: number;
  /** Name of the Event the refresher already recorded for this failure, if it did. */
  logId?: string;
  message: string;
}

export interface RefreshFailuresOptions {
  connections: Pick<ConnectionStore, 'getConnectionByName' | 'updateConnectionStatus' | 'updateConnection'>;
  /** Records a Kubernetes Event about the connection and returns its name (the errors' log_id). */
  events: Pick<ConnectionEvents, 'record'>;
  clock: Clock;
  /** Backoff of transient failures (attempts counted in status.refreshAttempts). */
  backoff?: BackoffPolicy;
  /** Told once per failed set of credentials that the end user must authorize again (sends the refresh webhook). */
  onReauthorizationRequired?: (connection: ConnectionResource, message: string) => Promise<unknown>;
}

/**
 * What a failed scheduled refresh writes (the scheduler decides when the next attempt is): after a
 * transient failure the attempts and the next attempt's time; after a permanent one the credentials
 * marked as refused ({@link REAUTH_VERSION_ANNOTATION}), one Event and one `errors` entry, and the
 * refresh webhook.
 */
export class RefreshFailures {
  private readonly backoff: BackoffPolicy;

  constructor(private readonly opts: RefreshFailuresOptions) {
    this.backoff = opts.backoff ?? { baseMs: 2_000, maxMs: 10 * 60_000, jitter: 0.2 };
  }

  /** Backoff of the next attempt: exponential in the attempts so far, and never before Retry-After. */
  retryDelay(conn: StoredConnection, failure: RefreshFailure): number {
    const attempts = (conn.resource.status?.refreshAttempts ?? 0) + 1;
    return Math.max(failure.retryAfterMs ?? 0, backoffDelay(this.backoff, attempts));
  }

  async transient(namespace: string, name: string, conn: StoredConnection, at: number): Promise<void> {
    const attempts = (conn.resource.status?.refreshAttempts ?? 0) + 1;
    await this.opts.connections.updateConnectionStatus(namespace, name, ConnectionStatusWriter.Scheduler, (s) => ({
      ...s,
      // The refresher counts its own failure; count it once.
      refreshAttempts: Math.max(s.refreshAttempts ?? 0, attempts),
      nextRefreshAt: new Date(at).toISOString(),
    }));
  }

  async permanent(namespace: string, name: string, conn: StoredConnection, failure: RefreshFailure, log: Logger): Promise<void> {
    const { connections } = this.opts;
    // The credentials as they are now (the refresher may have written them while failing).
    const current = connections.getConnectionByName(namespace, name) ?? conn;
    if (needsReauthorization(current)) return; // already recorded for these credentials
    const now = this.opts.clock.now();
    const reasonLabel = failureReason(failure.oauthError ?? failure.code, failure.status, true);
    const message = reauthorizationMessage(conn.resource.spec, describeFailure(failure));
    let logId = failure.logId;
    if (!logId) {
      // The refresher could not record it: the Event and the `errors` entry are ours (the Event has the reason the condition will have).
      logId = await this.opts.events.record(current.resource, {
        type: 'Warning',
        reason: ConnectionReason.ReauthorizationRequired,
        message,
        action: 'Refresh',
      });
    }
    log.warn({ reason: reasonLabel, logId }, 'token refresh failed for good; connection needs re-authorization');
    // Mark the credentials version first, so that nothing retries these credentials after a restart.
    await connections.updateConnection(namespace, name, (c) => ({
      ...c,
      metadata: { ...c.metadata, annotations: { ...c.metadata.annotations, [REAUTH_VERSION_ANNOTATION]: current.credentialsVersion } },
    }));
    const recordedByRefresher = Boolean(failure.logId);
    await connections.updateConnectionStatus(namespace, name, ConnectionStatusWriter.Scheduler, (s) => {
      const errors = [...(s.errors ?? [])];
      if (!recordedByRefresher || !errors.some((e) => e.logId === logId)) {
        // The provider's answer alone: the connection reconciler puts it into the condition's message.
        const detail = describeFailure(failure).slice(0, 1024);
        errors.push({ type: 'auth', logId: logId!, message: detail, occurredAt: new Date(now).toISOString() });
      }
      const next: ConnectionStatus = {
        ...s,
        // The refresher counts its own failure; count it once.
        refreshAttempts: Math.max(s.refreshAttempts ?? 0, (conn.resource.status?.refreshAttempts ?? 0) + 1),
        errors: errors.slice(-20),
      };
      delete next.nextRefreshAt;
      return next;
    });
    // After the marking, so a crash in between cannot send it twice for the same credentials.
    await this.opts
      .onReauthorizationRequired?.(current.resource, message)
      .catch((err: unknown) => log.warn({ err: String(err) }, 'could not queue the refresh-failure webhook'));
  }
}

/** A refresh's error read by its fields (RefreshError: code, permanent, retryAfterMs, providerError, logId). */
export function asRefreshFailure(err: unknown): RefreshFailure {
  const e = (err ?? {}) as Record<string, unknown>;
  const message = err instanceof Error ? err.message : String(err);
  // RefreshError of src/auth/refresh/errors.ts: code (reauthorization_required, provider_unavailable,
  // integration_misconfigured, refresh_in_progress) and providerError { error, status }.
  const providerError = (e.providerError ?? {}) as { error?: unknown; status?: unknown };
  const status = typeof providerError.status === 'number' ? providerError.status : typeof e.status === 'number' ? e.status : undefined;
  const code = typeof e.code === 'string' ? e.code : undefined;
  const oauthError = typeof providerError.error === 'string' ? providerError.error : undefined;
  return {
    permanent: e.permanent === true,
    retryAfterMs: typeof e.retryAfterMs === 'number' && e.retryAfterMs >= 0 ? e.retryAfterMs : undefined,
    code,
    oauthError,
    status,
    logId: typeof e.logId === 'string' ? e.logId : undefined,
    message,
  };
}

function describeFailure(f: RefreshFailure): string {
  const parts = [f.oauthError, f.status ? `HTTP ${f.status}` : undefined].filter(Boolean);
  // The message of a refresh error is written by the refresher and carries no credential.
  const text = f.message.slice(0, 300);
  return parts.length ? `${parts.join(', ')}: ${text}` : text;
}
