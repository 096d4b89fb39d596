import type { Clock } from '../../domain/clock.js';
import { CREDENTIALS_ERROR, statusAfterRefreshFailure } from '../../domain/connection-state.js';
import { ConnectionStatusWriter } from '../../domain/connection-status-writers.js';
import type { ConnectionEvents } from '../../k8s/events.js';
import type { ConnectionError, ConnectionStatus } from '../../k8s/resources.js';
import type { CatalogStatus, CatalogStore, ConnectionStore, StoredConnection } from '../../k8s/store.js';
import { apiMessage } from '../../k8s/errors.js';
import type { Logger } from '../../platform/log.js';
import type { OperationLog } from '../../oplog/operation-log.js';
import { secretValues } from '../../oplog/redact.js';
import { CLIENT_FAULT_ANNOTATION, encodeClientFault, secretsVersion } from './integration-fault.js';
import type { RefreshError } from './errors.js';
import { describeChanges, type ProviderValueChange } from './provider-values.js';

/** Why a refresh runs; `request`: a person asked for it (`kubectl latchkey refresh`, src/controller/refresh-requests.ts); `binding`: a CredentialBinding found the token due within its own margin. */
export type RefreshReason = 'fetch' | 'schedule' | 'proxy' | 'unauthorized' | 'request' | 'binding';

/** A refresh that stored new credentials. */
export interface RefreshSucceeded {
  /** The connection as the refresh found it (its credentials are redacted from the entry). */
  connection: StoredConnection;
  reason: RefreshReason;
  durationMs: number;
  /** The status the new credentials make of the stored one. */
  status: (current: ConnectionStatus | undefined) => ConnectionStatus;
  /** `status.expiresAt` after it (or none). */
  expiresAt: string | undefined;
  /** Write the status now (false: a scheduled refresh, whose status the connection reconciler writes with its conditions). */
  writeStatus: boolean;
  /** Record the refresh in the operation log (false: a scheduled one that succeeded, the routine). */
  logged: boolean;
}

/** Connection configuration values a refresh answer changed (already written to the Connection). */
export interface ProviderValuesChanged {
  connection: StoredConnection;
  changes: ProviderValueChange[];
}

/** A refresh that failed, already classified; the hook sets `failure.logId` where it recorded it. */
export interface RefreshFailed {
  connection: StoredConnection;
  failure: RefreshError;
  reason: RefreshReason;
  durationMs: number;
  /** The status new credentials stored before the failure make (a login after the refresh failed): written with the failure. */
  status?: (current: ConnectionStatus) => ConnectionStatus;
}

/**
 * What a refresh's outcome does besides the credentials it writes, passed in (as Nango's
 * `onRefreshSuccess` / `onRefreshFailed`): the refresher decides, the hooks record. None may throw.
 */
export interface RefreshHooks {
  /** Called once the credentials are stored, before the answer is sent: work it does not wait for goes after the answer. */
  onRefreshSuccess(success: RefreshSucceeded): void;
  /** The connection's refresh failed: recorded where its `log_id` will point (set on the failure), awaited before the caller hears of it. */
  onRefreshFailed(failed: RefreshFailed): Promise<void>;
  /** The provider refused the Integration's client (not the end user's grant): the Integration is flagged. */
  onIntegrationRefused(failed: RefreshFailed): Promise<void>;
  /** A refresh answer changed values the Provider takes from token answers (Pipedrive's `api_domain`): recorded. */
  onProviderValuesChanged(changed: ProviderValuesChanged): void;
}

export interface RefreshRecordsDeps {
  connections: Pick<ConnectionStore, 'updateConnectionStatus'>;
  catalog: Pick<CatalogStore, 'getIntegration' | 'getReferencedSecret'>;
  catalogStatus: Pick<CatalogStatus, 'annotateIntegration'>;
  events: Pick<ConnectionEvents, 'record'>;
  /** The durable operation log; its entry ID becomes the failure's `log_id` (the Event is still recorded). */
  oplog?: OperationLog;
  logger: Logger;
  clock: Clock;
}

/**
 * The hooks every process uses: the Connection's status written, the Integration flagged (an
 * annotation its reconciler turns into a condition), an operation-log entry and an Event.
 */
export function refreshRecords(deps: RefreshRecordsDeps): RefreshHooks {
  const logger = deps.logger.child({ component: 'refresh' });
  const writeStatus = (namespace: string, name: string, mutate: (s: ConnectionStatus) => ConnectionStatus, what: string) =>
    deps.connections
      .updateConnectionStatus(namespace, name, ConnectionStatusWriter.Refresher, mutate)
      .catch((err: unknown) => logger.warn({ namespace, connection: name, err: apiMessage(err) }, `could not record ${what} in status`));

  /** One operation log entry about this refresh; the credentials' own values are redacted wherever they appear. */
  const logEntry = (
    conn: StoredConnection,
    reason: RefreshReason,
    outcome: 'success' | 'failure',
    durationMs: number,
    messages: string[],
    step: string = reason,
  ) => {
    const { resource, credentials } = conn;
    return deps.oplog?.record({
      namespace: resource.metadata.namespace!,
      operation: 'refresh',
      step,
      outcome,
      integration: resource.spec.integration,
      connectionId: resource.spec.connectionId,
      connection: { name: resource.metadata.name, uid: resource.metadata.uid },
      endUserId: resource.spec.endUser?.id,
      durationMs,
      messages,
      secrets: secretValues(credentials),
    });
  };

  return {
    onRefreshSuccess({ connection, reason, durationMs, status, expiresAt, writeStatus: write, logged }) {
      const { namespace, name } = connection.resource.metadata;
      if (write) afterAnswer(() => writeStatus(namespace!, name, status, 'the refresh'));
      if (logged) logEntry(connection, reason, 'success', durationMs, [`Token refreshed (${reason}); expires ${expiresAt ?? 'never'}`]);
    },

    onProviderValuesChanged({ connection, changes }) {
      logEntry(connection, 'schedule', 'success', 0, describeChanges(changes), 'provider_values');
    },

    /** Records an operation-log entry, an Event and a status error; the stored credentials are left as they were. */
    async onRefreshFailed({ connection: conn, failure, reason, durationMs, status }) {
      const namespace = conn.resource.metadata.namespace!;
      const name = conn.resource.metadata.name;
      const message = `Token refresh failed (${failure.permanent ? 'reauthorization required' : 'provider unavailable'}): ${failure.message}`;
      const p = failure.providerError;
      const answer = p
        ? `Provider answered${p.status ? ` HTTP ${p.status}` : ''}: ${[p.error, p.description].filter(Boolean).join(' - ')}`
        : undefined;
      const oplogId = logEntry(conn, reason, 'failure', durationMs, [message, ...(answer ? [answer] : [])]);
      // The ID goes into status and the answer: stored first, so whoever follows it at once finds it.
      if (oplogId) await deps.oplog?.whenStored(oplogId);
      logger.warn(
        { namespace, connection: name, code: failure.code, permanent: failure.permanent, providerError: failure.providerError },
        'token refresh failed',
      );
      try {
        const eventName = await deps.events.record(conn.resource, {
          type: 'Warning',
          reason: 'RefreshFailed',
          action: 'Refresh',
          message: oplogId ? `${message} (log_id: ${oplogId})` : message,
        });
        failure.logId = oplogId ?? eventName;
      } catch (err) {
        logger.warn({ namespace, connection: name, err: String(err) }, 'could not record refresh failure event');
        if (!oplogId) return;
        failure.logId = oplogId;
      }
      const entry: ConnectionError = {
        type: CREDENTIALS_ERROR,
        logId: failure.logId,
        message: message.slice(0, 1024),
        occurredAt: new Date(deps.clock.now()).toISOString(),
        refreshFailure: failure.permanent ? 'permanent' : 'transient',
      };
      await writeStatus(namespace, name, (s) => statusAfterRefreshFailure(status ? status(s) : s, entry), 'refresh failure');
    },

    /** Recorded on the Integration (its reconciler turns it into a condition), not on the connection, whose grant is not at fault. */
    async onIntegrationRefused({ connection: conn, failure }) {
      const namespace = conn.resource.metadata.namespace!;
      const name = conn.resource.spec.integration;
      const integration = deps.catalog.getIntegration(namespace, name);
      logger.warn(
        { namespace, integration: name, code: failure.code, providerError: failure.providerError },
        'token refresh refused because of the integration',
      );
      if (!integration) return;
      const secretVersion = secretsVersion(
        integration,
        (secret) => deps.catalog.getReferencedSecret(namespace, secret)?.metadata?.resourceVersion,
      );
      const fault = encodeClientFault({
        generation: integration.metadata.generation ?? 0,
        secretVersion,
        detail: failure.message.slice(0, 300),
        at: new Date(deps.clock.now()).toISOString(),
      });
      await deps.catalogStatus
        .annotateIntegration(namespace, name, CLIENT_FAULT_ANNOTATION, fault)
        .catch((err: unknown) =>
          logger.warn({ namespace, integration: name, err: apiMessage(err) }, 'could not record the integration fault'),
        );
    },
  };
}

/**
 * Work the caller does not wait for, started once the current turn of the event loop is over: the
 * answer that the refreshed credentials complete is written to its socket first.
 */
export function afterAnswer(work: () => Promise<unknown>): void {
  setImmediate(() => void work());
}
