import type { Clock } from '../../domain/clock.js';
import type { ConnectionResource, ConnectionStatus } from '../../k8s/resources.js';
import type { KubeStore, StoredConnection, StoredCredentials } from '../../k8s/store.js';
import { findCondition, READY, setConditions, type ConditionInput } from './conditions.js';
import { credentialsExpiry } from '../refresh-timing.js';
import { NEEDS_REAUTHORIZATION, REAUTH_VERSION_ANNOTATION, REAUTHORIZATION_REQUIRED } from '../../auth/refresh/reauthorization.js';
import type { Plan } from '../refresh-scheduler.js';

export const INTEGRATION_READY = 'IntegrationReady';
export const CREDENTIALS_VALID = 'CredentialsValid';

export interface ConnectionReconcilerOptions {
  store: KubeStore;
  clock: Clock;
  /** The refresh scheduler: plans and (re)arms the connection's refresh. */
  schedule: (key: string) => Plan;
  forget: (key: string) => void;
  isRefreshable: (credentials: StoredCredentials) => boolean;
  /** False for credentials renewed only when used (tokens minted locally on fetch and proxy). */
  renewsAhead: (credentials: StoredCredentials) => boolean;
}

/**
 * Computes a Connection's conditions and refresh fields and arms its refresh timer:
 * `IntegrationReady` (its Integration and Provider exist and are valid), `CredentialsValid` (its Secret
 * exists, matches the auth mode, and was not refused by the provider), `NeedsReauthorization` (set by
 * the refresh scheduler on a permanent failure, lifted when new credentials are stored) and `Ready`,
 * which says in one reason what needs attention first.
 */
export class ConnectionReconciler {
  constructor(private readonly opts: ConnectionReconcilerOptions) {}

  async reconcile(namespace: string, name: string): Promise<void> {
    const key = `${namespace}/${name}`;
    const { store, clock } = this.opts;
    const resource = store.connections.get(name, namespace);
    if (!resource || resource.metadata.deletionTimestamp) {
      this.opts.forget(key);
      return;
    }
    const stored = store.getConnectionByName(namespace, name);
    const now = clock.now();
    const generation = resource.metadata.generation;

    const integrationCond = this.integrationCondition(resource);
    const plan = stored ? this.opts.schedule(key) : ({ kind: 'none', why: 'no credentials' } as Plan);
    const expiry = stored ? credentialsExpiry(stored.credentials) : undefined;
    let lifted = false;

    // Conditions that depend on the status (which the refresh scheduler and the refresher write too)
    // are computed inside the compare-and-swap, from the status as it is on the server.
    await store.updateConnectionStatus(namespace, name, (s) => {
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
      if (expiry !== undefined) next.expiresAt = new Date(expiry).toISOString();
      else if (stored) delete next.expiresAt;
      if (plan.kind === 'at' && !reauth.active) next.nextRefreshAt = new Date(plan.at).toISOString();
      else if (plan.kind === 'none') delete next.nextRefreshAt;
      return sameStatus(s, next) ? undefined : next;
    });
    // A lifted re-authorization changes what the scheduler sees: arm it again from the written status.
    if (lifted) this.opts.schedule(key);
  }

  private integrationCondition(resource: ConnectionResource): ConditionInput {
    const { store } = this.opts;
    const ns = resource.metadata.namespace!;
    const integration = store.getIntegration(ns, resource.spec.integration);
    if (!integration) {
      return {
        type: INTEGRATION_READY,
        status: 'False',
        reason: 'IntegrationNotFound',
        message: `Integration "${resource.spec.integration}" does not exist in namespace ${ns} (was it deleted?). Recreate it to use this connection again, or delete the connection.`,
      };
    }
    if (!store.getProvider(integration.spec.provider)) {
      return {
        type: INTEGRATION_READY,
        status: 'False',
        reason: 'ProviderNotFound',
        message: `Provider "${integration.spec.provider}" of integration "${integration.metadata.name}" does not exist (was it deleted?). Apply the Provider again.`,
      };
    }
    const ready = findCondition(integration.status?.conditions, READY);
    if (ready?.status === 'False') {
      return {
        type: INTEGRATION_READY,
        status: 'False',
        reason: 'IntegrationNotReady',
        message: `Integration "${integration.metadata.name}" is not ready (${ready.reason}): ${ready.message}`,
      };
    }
    return {
      type: INTEGRATION_READY,
      status: 'True',
      reason: 'IntegrationReady',
      message: `Integration "${integration.metadata.name}" and its provider are in place.`,
    };
  }

  private reauthCondition(
    resource: ConnectionResource,
    stored: StoredConnection | undefined,
  ): { condition: ConditionInput; active: boolean; lifted: boolean } {
    const current = findCondition(resource.status?.conditions, NEEDS_REAUTHORIZATION);
    if (current?.status === 'True') {
      const failedVersion = resource.metadata.annotations?.[REAUTH_VERSION_ANNOTATION];
      if (stored && failedVersion !== undefined && failedVersion !== stored.credentialsVersion) {
        return {
          condition: {
            type: NEEDS_REAUTHORIZATION,
            status: 'False',
            reason: 'Reauthorized',
            message: 'New credentials were stored after the provider refused the old ones.',
          },
          active: false,
          lifted: true,
        };
      }
      return {
        condition: { type: NEEDS_REAUTHORIZATION, status: 'True', reason: current.reason, message: current.message },
        active: true,
        lifted: false,
      };
    }
    const keep = current
      ? { reason: current.reason, message: current.message }
      : { reason: 'CredentialsAccepted', message: 'The provider has not refused these credentials.' };
    return { condition: { type: NEEDS_REAUTHORIZATION, status: 'False', ...keep }, active: false, lifted: false };
  }

  private credentialsCondition(
    resource: ConnectionResource,
    stored: StoredConnection | undefined,
    reauth: { active: boolean },
  ): ConditionInput {
    const name = resource.metadata.name;
    if (!stored) {
      return {
        type: CREDENTIALS_VALID,
        status: 'False',
        reason: 'CredentialsMissing',
        message: `The credentials Secret "${name}" does not exist or is unreadable; the connection is invisible to the API until it is written (an unfinished creation is removed by the controller).`,
      };
    }
    if (stored.credentials.type !== resource.spec.authMode) {
      return {
        type: CREDENTIALS_VALID,
        status: 'False',
        reason: 'CredentialsTypeMismatch',
        message: `The stored credentials are of type ${stored.credentials.type} but the connection's auth mode is ${resource.spec.authMode}; import credentials of type ${resource.spec.authMode}.`,
      };
    }
    if (reauth.active) {
      return {
        type: CREDENTIALS_VALID,
        status: 'False',
        reason: REAUTHORIZATION_REQUIRED,
        message: 'The provider refused these credentials; the end user must authorize again.',
      };
    }
    return {
      type: CREDENTIALS_VALID,
      status: 'True',
      reason: 'CredentialsPresent',
      message: `Credentials of type ${stored.credentials.type} are stored.`,
    };
  }

  private readyCondition(
    resource: ConnectionResource,
    stored: StoredConnection | undefined,
    integration: ConditionInput,
    credentials: ConditionInput,
    reauth: { condition: ConditionInput; active: boolean; lifted: boolean },
    expiry: number | undefined,
    now: number,
  ): ConditionInput {
    if (integration.status !== 'True') return { type: READY, status: 'False', reason: integration.reason, message: integration.message };
    if (reauth.active) {
      return { type: READY, status: 'False', reason: REAUTHORIZATION_REQUIRED, message: reauth.condition.message };
    }
    if (credentials.status !== 'True' || !stored)
      return { type: READY, status: 'False', reason: credentials.reason, message: credentials.message };
    const attempts = reauth.lifted ? 0 : (resource.status?.refreshAttempts ?? 0);
    if (attempts > 0) {
      const retry = resource.status?.nextRefreshAt ? ` Next attempt at ${resource.status.nextRefreshAt}.` : '';
      const valid =
        expiry !== undefined && expiry > now
          ? ` The current token stays valid until ${new Date(expiry).toISOString()}.`
          : ' The current token has expired.';
      return {
        type: READY,
        status: 'False',
        reason: 'RefreshFailing',
        message: `${attempts} refresh attempt(s) failed with a temporary error (see the Events of this connection); retrying with backoff.${retry}${valid}`,
      };
    }
    const renewable = this.opts.isRefreshable(stored.credentials);
    if (expiry !== undefined && expiry <= now && !renewable) {
      return {
        type: READY,
        status: 'False',
        reason: 'TokenExpired',
        message: `The access token expired at ${new Date(expiry).toISOString()} and cannot be renewed (no refresh token); import new credentials or ask the end user to authorize again.`,
      };
    }
    if (renewable && !this.opts.renewsAhead(stored.credentials)) {
      return {
        type: READY,
        status: 'True',
        reason: 'Ready',
        message: 'A new token is minted from the stored key whenever the connection is fetched or proxied.',
      };
    }
    if (expiry === undefined) return { type: READY, status: 'True', reason: 'Ready', message: 'The credentials do not expire.' };
    return {
      type: READY,
      status: 'True',
      reason: 'Ready',
      message: renewable
        ? 'The access token is renewed before it expires.'
        : 'The access token is valid; it cannot be renewed automatically.',
    };
  }
}

function sameStatus(a: ConnectionStatus, b: ConnectionStatus): boolean {
  const strip = (s: ConnectionStatus) => ({
    ...s,
    conditions: (s.conditions ?? []).map((c) => ({ ...c, lastTransitionTime: undefined })),
  });
  return JSON.stringify(strip(a)) === JSON.stringify(strip(b));
}
