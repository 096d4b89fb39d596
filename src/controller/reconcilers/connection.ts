import type { Clock } from '../../domain/clock.js';
import type { ConnectionResource, ConnectionStatus } from '../../k8s/resources.js';
import type { CatalogStore, ConnectionStore, StoredConnection, StoredCredentials } from '../../k8s/store.js';
import {
  ConnectionCondition,
  ConnectionReason,
  findCondition,
  IntegrationCondition,
  setConditions,
  type ConditionInput,
} from '../../domain/conditions.js';
import { credentialsExpiry } from '../refresh-timing.js';
import { sameStatus } from './conditions.js';
import { terminalIfRefused } from './terminal.js';
import { needsReauthorization, reauthorizationMessage } from '../../auth/refresh/reauthorization.js';
import type { Plan, RefreshDone } from '../refresh-scheduler.js';
import { statusAfterNewCredentials } from '../../domain/connection-state.js';
import type { RefreshSettings } from '../../domain/refresh-margin.js';
import { ConnectionStatusWriter } from '../../domain/connection-status-writers.js';

type Input = ConditionInput<ConnectionCondition, ConnectionReason>;
type Reauth = { condition: Input; active: boolean; lifted: boolean };

const { IntegrationReady, CredentialsValid, NeedsReauthorization, Ready } = ConnectionCondition;
const REFUSED = 'The provider refused these credentials; the end user must authorize again.';
const REAUTHORIZED = 'New credentials were stored after the provider refused the old ones.';
/**
 * The healthy IntegrationReady, CredentialsValid and NeedsReauthorization carry no message: their
 * reasons say it all (`IntegrationReady`, `CredentialsPresent`, `CredentialsAccepted`), and a
 * Connection is stored per end user (about 140 bytes each in etcd, bench/etcd-bytes-notes.md). Ready
 * and every condition that needs attention keep theirs.
 */
const HEALTHY_WITHOUT_MESSAGE: ReadonlySet<string> = new Set([
  ConnectionReason.IntegrationReady,
  ConnectionReason.CredentialsPresent,
  ConnectionReason.CredentialsAccepted,
]);

export interface ConnectionReconcilerOptions {
  connections: ConnectionStore;
  catalog: CatalogStore;
  clock: Clock;
  /** The refresh scheduler: plans and (re)arms the connection's refresh. */
  schedule: (key: string) => Plan;
  forget: (key: string) => void;
  isRefreshable: (credentials: StoredCredentials) => boolean;
  /** False for credentials renewed only when used (tokens minted locally on fetch and proxy). */
  renewsAhead: (credentials: StoredCredentials) => boolean;
  /** Reconciles the connection again at `at` (epoch ms): a condition that changes with time alone. */
  revisitAt: (key: string, at: number) => void;
  /** The refresh margin settings (the status of a refresh records when the next one is due). */
  settings: RefreshSettings;
  /** A successful scheduled refresh whose status is to be written with this reconcile's (the refresh scheduler's). */
  refreshed?: (key: string) => RefreshDone | undefined;
  /** That refresh's status is written (or was found written). */
  recorded?: (key: string, done: RefreshDone) => void;
}

/**
 * Computes a Connection's conditions and refresh fields and arms its refresh timer. The only writer of
 * a Connection's conditions: `IntegrationReady` (its Integration and Provider exist and are valid),
 * `CredentialsValid` (its Secret exists, matches the auth mode, and was not refused by the provider),
 * `NeedsReauthorization` (the credentials are the version the refresh scheduler recorded as refused
 * for good; lifted when new credentials are stored) and `Ready`, which says in one reason what needs
 * attention first (including refresh failures the refresher and scheduler count in status).
 */
export class ConnectionReconciler {
  constructor(private readonly opts: ConnectionReconcilerOptions) {}

  async reconcile(namespace: string, name: string): Promise<void> {
    const key = `${namespace}/${name}`;
    const { connections, clock } = this.opts;
    const resource = connections.connectionResource(namespace, name);
    if (!resource || resource.metadata.deletionTimestamp) {
      this.opts.forget(key);
      return;
    }
    const stored = connections.getConnectionByName(namespace, name);
    const now = clock.now();
    const generation = resource.metadata.generation;

    const integrationCond = this.integrationCondition(resource);
    const plan = stored ? this.opts.schedule(key) : ({ kind: 'none', why: 'no credentials' } as Plan);
    const expiry = stored ? credentialsExpiry(stored.credentials) : undefined;
    // A refresh the scheduler finished: its fields go into this write (the credentials it wrote are these).
    const done = this.opts.refreshed?.(key);
    const refresh = done && stored?.credentialsVersion === done.credentialsVersion ? done : undefined;
    // Never reconciled, and its token due now: the refresh runs next and asks for a reconcile that
    // writes the conditions with the refresh's fields (one status write, not two; readers of the API
    // see the derived status meanwhile).
    const refreshFirst = stored && plan.kind === 'at' && plan.at <= now && !plan.retry && !refresh;
    let lifted = false;

    // Conditions that depend on the status (whose refresh fields the refresh scheduler and the
    // refresher write) are computed inside the compare-and-swap, from the status as it is on the server.
    const written = connections.updateConnectionStatus(namespace, name, ConnectionStatusWriter.Reconciler, (current) => {
      if (refreshFirst && !current.conditions?.length) return undefined;
      const s = !refresh
        ? current
        : refresh.renewed
          ? statusAfterNewCredentials(current, stored!.credentials, this.opts.settings, refresh.at, 'refreshed')
          : { ...current, refreshAttempts: 0 };
      const view: ConnectionResource = { ...resource, status: s };
      const reauth = this.reauthCondition(view, stored);
      lifted = reauth.lifted;
      const credentialsCond = this.credentialsCondition(view, stored, reauth);
      const ready = this.readyCondition(view, stored, integrationCond, credentialsCond, reauth, expiry, now);
      const updates = [integrationCond, credentialsCond, reauth.condition, ready];
      const next: ConnectionStatus = {
        ...s,
        observedGeneration: generation,
        conditions: setConditions(s.conditions, updates, generation, now),
      };
      if (reauth.lifted) next.refreshAttempts = 0;
      // A creation writes no status (two writes per import): its time goes in with the first reconcile.
      if (!s.updatedAt && stored?.resource.status?.updatedAt) next.updatedAt = stored.resource.status.updatedAt;
      if (expiry !== undefined) next.expiresAt = new Date(expiry).toISOString();
      else if (stored) delete next.expiresAt;
      if (plan.kind === 'at' && !reauth.active) next.nextRefreshAt = new Date(plan.at).toISOString();
      else if (plan.kind === 'none') delete next.nextRefreshAt;
      return sameStatus(asWrittenNow(current), next) ? undefined : next;
    });
    await written.catch((err: unknown) => terminalIfRefused(err, `Connection ${namespace}/${name}`));
    if (done) this.opts.recorded?.(key, done);
    // A lifted re-authorization changes what the scheduler sees: arm it again from the written status.
    if (lifted) this.opts.schedule(key);
    // A token nothing renews turns the connection TokenExpired when it expires: come back then (the
    // periodic resync is far too rare for this, and no event marks the moment).
    if (stored && expiry !== undefined && expiry > now && !this.opts.isRefreshable(stored.credentials))
      this.opts.revisitAt(key, expiry + 1000);
  }

  private integrationCondition(resource: ConnectionResource): Input {
    const { catalog } = this.opts;
    const ns = resource.metadata.namespace!;
    const integration = catalog.getIntegration(ns, resource.spec.integration);
    if (!integration) {
      return {
        type: IntegrationReady,
        status: 'False',
        reason: ConnectionReason.IntegrationNotFound,
        message:
          `Integration "${resource.spec.integration}" does not exist in namespace ${ns} (was it deleted?). ` +
          'Recreate it to use this connection again, or delete the connection.',
      };
    }
    if (!catalog.getProvider(integration.spec.provider)) {
      return {
        type: IntegrationReady,
        status: 'False',
        reason: ConnectionReason.ProviderNotFound,
        message:
          `Provider "${integration.spec.provider}" of integration "${integration.metadata.name}" does not exist ` +
          '(was it deleted?). Apply the Provider again.',
      };
    }
    const ready = findCondition(integration.status?.conditions, IntegrationCondition.Ready);
    if (ready?.status === 'False') {
      return {
        type: IntegrationReady,
        status: 'False',
        reason: ConnectionReason.IntegrationNotReady,
        message: `Integration "${integration.metadata.name}" is not ready (${ready.reason}): ${ready.message}`,
      };
    }
    return {
      type: IntegrationReady,
      status: 'True',
      reason: ConnectionReason.IntegrationReady,
      message: '',
    };
  }

  /**
   * `NeedsReauthorization`, from the refused credentials version the refresh scheduler recorded (an
   * annotation) and the provider's answer in `status.errors`; `lifted` when new credentials replaced
   * refused ones.
   */
  private reauthCondition(resource: ConnectionResource, stored: StoredConnection | undefined): Reauth {
    const current = findCondition(resource.status?.conditions, NeedsReauthorization);
    const wasRefused = current?.status === 'True';
    // Without credentials there is no version to compare: it stays as it was.
    const refused = stored ? needsReauthorization({ ...stored, resource }) : wasRefused;
    if (refused) {
      // From the status each time: the scheduler writes the provider's answer just after the annotation.
      const message = reauthorizationMessage(resource.spec, lastAuthError(resource.status));
      return {
        condition: { type: NeedsReauthorization, status: 'True', reason: ConnectionReason.ReauthorizationRequired, message },
        active: true,
        lifted: false,
      };
    }
    if (wasRefused || current?.reason === ConnectionReason.Reauthorized) {
      return {
        condition: { type: NeedsReauthorization, status: 'False', reason: ConnectionReason.Reauthorized, message: REAUTHORIZED },
        active: false,
        lifted: wasRefused,
      };
    }
    return {
      condition: { type: NeedsReauthorization, status: 'False', reason: ConnectionReason.CredentialsAccepted, message: '' },
      active: false,
      lifted: false,
    };
  }

  private credentialsCondition(resource: ConnectionResource, stored: StoredConnection | undefined, reauth: { active: boolean }): Input {
    const name = resource.metadata.name;
    if (!stored) {
      return {
        type: CredentialsValid,
        status: 'False',
        reason: ConnectionReason.CredentialsMissing,
        message:
          `The credentials Secret "${name}" does not exist or is unreadable; the connection is invisible to the API ` +
          'until it is written (an unfinished creation is removed by the controller).',
      };
    }
    const { authMode } = resource.spec;
    if (stored.credentials.type !== authMode) {
      return {
        type: CredentialsValid,
        status: 'False',
        reason: ConnectionReason.CredentialsTypeMismatch,
        message:
          `The stored credentials are of type ${stored.credentials.type} but the connection's auth mode is ${authMode}; ` +
          `import credentials of type ${authMode}.`,
      };
    }
    if (reauth.active) {
      return { type: CredentialsValid, status: 'False', reason: ConnectionReason.ReauthorizationRequired, message: REFUSED };
    }
    return {
      type: CredentialsValid,
      status: 'True',
      reason: ConnectionReason.CredentialsPresent,
      message: '',
    };
  }

  private readyCondition(
    resource: ConnectionResource,
    stored: StoredConnection | undefined,
    integration: Input,
    credentials: Input,
    reauth: Reauth,
    expiry: number | undefined,
    now: number,
  ): Input {
    if (integration.status !== 'True') return { type: Ready, status: 'False', reason: integration.reason, message: integration.message };
    if (reauth.active) {
      return { type: Ready, status: 'False', reason: ConnectionReason.ReauthorizationRequired, message: reauth.condition.message };
    }
    if (credentials.status !== 'True' || !stored) {
      return { type: Ready, status: 'False', reason: credentials.reason, message: credentials.message };
    }
    const attempts = reauth.lifted ? 0 : (resource.status?.refreshAttempts ?? 0);
    if (attempts > 0) {
      const retry = resource.status?.nextRefreshAt ? ` Next attempt at ${resource.status.nextRefreshAt}.` : '';
      const valid =
        expiry !== undefined && expiry > now
          ? ` The current token stays valid until ${new Date(expiry).toISOString()}.`
          : ' The current token has expired.';
      return {
        type: Ready,
        status: 'False',
        reason: ConnectionReason.RefreshFailing,
        message:
          `${attempts} refresh attempt(s) failed with a temporary error (see the Events of this connection); ` +
          `retrying with backoff.${retry}${valid}`,
      };
    }
    const renewable = this.opts.isRefreshable(stored.credentials);
    if (expiry !== undefined && expiry <= now && !renewable) {
      return {
        type: Ready,
        status: 'False',
        reason: ConnectionReason.TokenExpired,
        message:
          `The access token expired at ${new Date(expiry).toISOString()} and cannot be renewed (no refresh token); ` +
          'import new credentials or ask the end user to authorize again.',
      };
    }
    if (renewable && !this.opts.renewsAhead(stored.credentials)) {
      return {
        type: Ready,
        status: 'True',
        reason: ConnectionReason.Ready,
        message: 'A new token is minted from the stored key whenever the connection is fetched or proxied.',
      };
    }
    if (expiry === undefined)
      return { type: Ready, status: 'True', reason: ConnectionReason.Ready, message: 'The credentials do not expire.' };
    return {
      type: Ready,
      status: 'True',
      reason: ConnectionReason.Ready,
      message: renewable
        ? 'The access token is renewed before it expires.'
        : 'The access token is valid; it cannot be renewed automatically.',
    };
  }
}

/** The provider's answer to the last refresh that failed (recorded by the refresher or the scheduler). */
function lastAuthError(status: ConnectionStatus | undefined): string | undefined {
  const last = [...(status?.errors ?? [])].reverse().find((e) => e.type === 'auth');
  return last?.message?.slice(0, 600);
}

/**
 * A status as this release writes it: without the healthy conditions' messages. A Connection written
 * before is not rewritten for that alone (no status write per Connection after an upgrade); it takes
 * the shorter form with its next change.
 */
export function asWrittenNow(status: ConnectionStatus): ConnectionStatus {
  if (!status.conditions) return status;
  return {
    ...status,
    conditions: status.conditions.map((c) => (HEALTHY_WITHOUT_MESSAGE.has(c.reason) ? { ...c, message: '' } : c)),
  };
}
