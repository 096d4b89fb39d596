import type { Clock } from '../domain/clock.js';
import type { ConnectionEvents } from '../k8s/events.js';
import type { Logger } from '../platform/log.js';
import type { ConnectionResource } from '../k8s/resources.js';
import type { ConnectionStore, StoredCredentials } from '../k8s/store.js';
import { ANNOTATIONS } from '../k8s/resources.js';
import {
  decideRefreshRequest,
  parseRefreshRequestRecord,
  type RefreshRequestDecision,
  type RefreshRequestRecord,
} from '../domain/refresh-request.js';
import { asRefreshFailure } from './refresh-scheduler.js';

export interface RefreshRequestsOptions {
  connections: Pick<ConnectionStore, 'updateConnection' | 'getConnectionByName'>;
  /** The shared refresher, forced (its `request` reason: it writes the status, the operation log entry and, on failure, the Event). */
  refresh: (namespace: string, integration: string, connectionId: string, opts: { reason: 'request'; force: true }) => Promise<unknown>;
  /** Whether the credentials can be renewed at all. */
  isRefreshable: (credentials: StoredCredentials) => boolean;
  events: Pick<ConnectionEvents, 'record'>;
  clock: Clock;
  logger: Logger;
  /** Told when a request's refresh is over (the connection reconciler recomputes the conditions). */
  onDone: (key: string) => void;
}

/**
 * Answers refresh requests on the connections this replica owns (`kubectl latchkey refresh` writes
 * `latchkey.dev/refresh-requested-at`; Kubernetes RBAC `patch` on `connections` decides who may ask).
 * A request is claimed first, by a compare-and-swap write of the record annotation naming it
 * (`InProgress`), and refreshed only by whoever wrote the claim: a repeated request, a reconcile while
 * the refresh runs, or a replica that took the connection over finds it claimed. The outcome replaces
 * the claim when the refresh is over. A replica that dies between the two leaves `InProgress`: the
 * request is not retried (at most once; asking again is one command).
 */
export class RefreshRequests {
  private readonly running = new Set<string>();

  constructor(private readonly opts: RefreshRequestsOptions) {}

  /** Handles the connection's pending request, if it has one; the refresh itself runs in the background. */
  async handle(key: string, resource: ConnectionResource): Promise<void> {
    if (this.running.has(key) || !pending(resource)) return;
    const namespace = resource.metadata.namespace!;
    const name = resource.metadata.name;
    const now = () => new Date(this.opts.clock.now()).toISOString();
    let claimed: RefreshRequestDecision = { kind: 'none' };
    await this.opts.connections.updateConnection(namespace, name, (current) => {
      // Called again with the server's copy after a conflict: only the attempt that is written claims.
      const decision = decisionOf(current);
      claimed = decision;
      if (decision.kind === 'none') return undefined;
      return withRecord(current, this.recordFor(decision, now()));
    });
    const decision = claimed as RefreshRequestDecision;
    if (decision.kind === 'none') return;
    const log = this.opts.logger.child({ namespace, connection: name, requestedAt: decision.requestedAt });
    if (decision.kind !== 'refresh') {
      log.info({ outcome: this.recordFor(decision, now()).outcome }, 'refresh request answered without a refresh');
      return;
    }
    this.running.add(key);
    void this.run(key, namespace, name, decision.requestedAt, log).finally(() => {
      this.running.delete(key);
      this.opts.onDone(key);
    });
  }

  private async run(key: string, namespace: string, name: string, requestedAt: string, log: Logger): Promise<void> {
    const stored = this.opts.connections.getConnectionByName(namespace, name);
    let record: RefreshRequestRecord;
    if (!stored || !this.opts.isRefreshable(stored.credentials)) {
      record = {
        requestedAt,
        outcome: 'NotRenewable',
        at: new Date(this.opts.clock.now()).toISOString(),
        message: stored
          ? 'These credentials cannot be renewed (no refresh token, or an auth mode without renewal).'
          : 'The connection has no credentials.',
      };
    } else {
      const { integration, connectionId } = stored.resource.spec;
      try {
        await this.opts.refresh(namespace, integration, connectionId, { reason: 'request', force: true });
        const fresh = this.opts.connections.getConnectionByName(namespace, name);
        const expires = fresh?.credentials.expires_at;
        record = {
          requestedAt,
          outcome: 'Refreshed',
          at: new Date(this.opts.clock.now()).toISOString(),
          message: `Refreshed as requested${typeof expires === 'string' ? `; the token expires at ${expires}` : ''}.`,
        };
      } catch (err) {
        const failure = asRefreshFailure(err);
        record = {
          requestedAt,
          outcome: 'Failed',
          at: new Date(this.opts.clock.now()).toISOString(),
          message: `${failure.permanent ? 'The provider refused the credentials' : 'The refresh failed'}: ${failure.message}`.slice(0, 600),
        };
      }
    }
    log.info({ outcome: record.outcome }, 'refresh request answered');
    try {
      const written = await this.opts.connections.updateConnection(namespace, name, (current) => {
        // Only over its own claim: a newer request's claim (or outcome) stays.
        const mine = parseRefreshRequestRecord(current.metadata.annotations?.[ANNOTATIONS.refreshRequest]);
        return mine?.requestedAt === requestedAt ? withRecord(current, record) : undefined;
      });
      if (record.outcome === 'NotRenewable')
        await this.opts.events.record(written, {
          type: 'Warning',
          reason: 'RefreshRequestNotRenewable',
          message: record.message!,
          action: 'Refresh',
        });
      else if (record.outcome === 'Refreshed')
        await this.opts.events.record(written, { type: 'Normal', reason: 'RefreshRequested', message: record.message!, action: 'Refresh' });
    } catch (err) {
      log.warn({ err: err instanceof Error ? err.message : String(err), key }, 'could not record the outcome of a refresh request');
    }
  }

  private recordFor(decision: Exclude<RefreshRequestDecision, { kind: 'none' }>, at: string): RefreshRequestRecord {
    switch (decision.kind) {
      case 'refresh':
        return { requestedAt: decision.requestedAt, outcome: 'InProgress', at };
      case 'satisfied':
        return {
          requestedAt: decision.requestedAt,
          outcome: 'AlreadyRefreshed',
          at,
          message: `The connection was refreshed at ${decision.lastRefreshedAt}, after the request.`,
        };
      case 'invalid':
        return { requestedAt: decision.requestedAt, outcome: 'Invalid', at, message: 'The requested time is not an ISO 8601 time.' };
    }
  }
}

function decisionOf(resource: ConnectionResource): RefreshRequestDecision {
  const annotations = resource.metadata.annotations;
  return decideRefreshRequest(
    annotations?.[ANNOTATIONS.refreshRequestedAt],
    parseRefreshRequestRecord(annotations?.[ANNOTATIONS.refreshRequest]),
    resource.status?.lastRefreshedAt,
  );
}

/** Whether the connection carries a request not handled yet (cheap: no write). */
function pending(resource: ConnectionResource): boolean {
  return decisionOf(resource).kind !== 'none';
}

function withRecord(resource: ConnectionResource, record: RefreshRequestRecord): ConnectionResource {
  return {
    ...resource,
    metadata: {
      ...resource.metadata,
      annotations: { ...resource.metadata.annotations, [ANNOTATIONS.refreshRequest]: JSON.stringify(record) },
    },
  };
}
