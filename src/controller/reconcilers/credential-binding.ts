/**
 * The CredentialBinding reconciler: makes a binding's Secret hold its connection's current access token
 * (refreshed first when due within the binding's margin), or nothing, and reports both conditions
 * (`Synced`, `Ready`). It runs in the controller replica that owns the bound connection
 * (src/controller/binding-sync.ts decides when).
 *
 * What it never writes: a Secret for a binding the Environment does not allow, anything but the
 * access token and facts about the connection (src/catalog/binding-template.ts), a token or an error
 * carrying one into the binding's status.
 */
import type { Clock } from '../../domain/clock.js';
import {
  CredentialBindingCondition,
  CredentialBindingReason,
  findCondition,
  setConditions,
  type ConditionInput,
} from '../../domain/conditions.js';
import { ConnectionCondition } from '../../domain/conditions.js';
import { expiresAtOf, lifetimeSecondsOf } from '../../domain/credentials.js';
import { LatchkeyError } from '../../domain/errors.js';
import { needsReauthorization } from '../../auth/refresh/reauthorization.js';
import { RefreshError } from '../../auth/refresh/errors.js';
import { selectsLabels } from '../../domain/label-selector.js';
import { refreshMarginMs, type RefreshSettings } from '../../domain/refresh-margin.js';
import { DEFAULT_BINDING_TEMPLATE, emptiedBindingValues, fillBindingTemplate } from '../../catalog/binding-template.js';
import { fillTemplate } from '../../catalog/template.js';
import { accessTokenOf } from '../../modes/registry.js';
import { connectionObjectName } from '../../k8s/names.js';
import type { BoundSecretContent, BoundSecretWrite, CredentialBindings } from '../../k8s/credential-bindings.js';
import type { CatalogStore, ConnectionStore, StoredConnection, StoredCredentials } from '../../k8s/store.js';
import type { CredentialBindingResource, CredentialBindingStatus, EnvironmentResource } from '../../k8s/resources.js';
import type { Logger } from '../../platform/log.js';

/** A binding whose state may change without an event reaching it (its namespace's labels) is looked at again this often. */
export const BINDING_RECHECK_MS = 5 * 60_000;
/** A connection that exists but is not in this replica's cache yet (taken over, its Secret being written): looked for again. */
const NOT_CACHED_RETRY_MS = 2_000;
/** A due token whose refresh failed: tried again after this (the token still valid meanwhile). */
const REFRESH_RETRY_MS = 10_000;

export interface CredentialBindingReconcilerDeps {
  bindings: Pick<CredentialBindings, 'get' | 'namespaceLabels' | 'writeSecret' | 'updateStatus' | 'restartWorkload'>;
  connections: Pick<ConnectionStore, 'getConnection' | 'findConnectionIdentity'>;
  catalog: Pick<CatalogStore, 'listEnvironments' | 'getProvider'>;
  /** The shared refresher's ensureFresh: `marginSeconds` the binding's own margin; `force` for a token minted on use that is missing. */
  refresh(
    namespace: string,
    integration: string,
    connectionId: string,
    opts: { marginSeconds: number; force?: boolean },
  ): Promise<StoredConnection>;
  /** Whether the credentials' mode renews its token (src/modes). */
  isRefreshable(credentials: StoredCredentials): boolean;
  settings: RefreshSettings;
  clock: Clock;
  logger: Logger;
}

/** What the sync loop does next with the binding: look at it again after `requeueAfterMs` (none: only on an event). */
export interface BindingOutcome {
  requeueAfterMs?: number;
}

/** One decision about the Secret and the conditions, before it is written. */
interface Verdict {
  /** What to write in the Secret: the token's content, empty values (existing Secret only), or nothing. */
  write: { content: BoundSecretContent; create: boolean } | undefined;
  /** The write carries the token (not emptied values). */
  token?: boolean;
  synced: Omit<ConditionInput, 'type'>;
  ready: Omit<ConditionInput, 'type'>;
  expiresAt?: string;
  requeueAfterMs?: number;
}

export class CredentialBindingReconciler {
  constructor(private readonly deps: CredentialBindingReconcilerDeps) {}

  async reconcile(namespace: string, name: string): Promise<BindingOutcome> {
    const binding = this.deps.bindings.get(namespace, name);
    if (!binding || binding.metadata.deletionTimestamp) return {};
    const verdict = await this.decide(binding);
    const secretName = binding.spec.target?.name ?? binding.metadata.name;
    let written: BoundSecretWrite = 'unchanged';
    if (verdict.write) {
      written = await this.deps.bindings.writeSecret(binding, secretName, verdict.write.content, { create: verdict.write.create });
      if (written === 'not-owned') {
        const message = `Secret ${secretName} exists and is not this binding's: nothing was written (delete it, or name another target)`;
        verdict.synced = { status: 'False', reason: CredentialBindingReason.SecretNotOwned, message };
        verdict.ready = verdict.synced;
        verdict.expiresAt = undefined;
      }
    }
    // A changed token restarts the named workloads; a restart that failed is tried again on the next
    // reconcile, while Synced says so (the Secret no longer changes then).
    const tokenWritten = verdict.token === true && written !== 'not-owned';
    const retryRestart =
      findCondition(binding.status?.conditions, CredentialBindingCondition.Synced)?.reason === CredentialBindingReason.RolloutRestartFailed;
    if (tokenWritten && (written === 'updated' || retryRestart)) {
      const failed = await this.restart(binding);
      if (failed) {
        verdict.synced = { status: 'False', reason: CredentialBindingReason.RolloutRestartFailed, message: failed };
        verdict.requeueAfterMs = Math.min(verdict.requeueAfterMs ?? REFRESH_RETRY_MS, REFRESH_RETRY_MS);
      }
    }
    await this.writeStatus(binding, secretName, verdict, written === 'created' || written === 'updated');
    this.deps.logger.debug(
      { namespace, binding: name, connection: bindingConnection(binding), write: written, ready: verdict.ready.reason },
      'credential binding synced',
    );
    return { requeueAfterMs: verdict.requeueAfterMs };
  }

  private async decide(binding: CredentialBindingResource): Promise<Verdict> {
    const ref = binding.spec.connectionRef;
    const template = nonEmpty(binding.spec.target?.template) ?? DEFAULT_BINDING_TEMPLATE;
    const connection = bindingConnection(binding);
    const emptied = { content: { data: emptiedBindingValues(template), expiresAt: undefined, connection }, create: false };
    /** Refused or failed: the Secret's values emptied (`empty`; an existing Secret only) or left as they are (`keep`). */
    const refuse = (reason: string, message: string, secret: 'empty' | 'keep' = 'empty'): Verdict => {
      const c = { status: 'False' as const, reason, message };
      return { write: secret === 'empty' ? emptied : undefined, synced: c, ready: c, requeueAfterMs: BINDING_RECHECK_MS };
    };

    // 1. The Environment decides who may bind. A refused binding creates nothing; a Secret it wrote
    //    while it was allowed is emptied.
    const environment = environmentOf(this.deps.catalog.listEnvironments(ref.namespace));
    if (!environment)
      return refuse(CredentialBindingReason.EnvironmentNotFound, `namespace ${ref.namespace} has no Environment: nothing was written`);
    const selector = environment.spec.credentialBindings?.namespaceSelector;
    const envName = `${ref.namespace}/${environment.metadata.name}`;
    if (!selector)
      return refuse(
        CredentialBindingReason.NotAllowed,
        `Environment ${envName} allows no bindings (spec.credentialBindings): nothing was written`,
      );
    const labels = await this.deps.bindings.namespaceLabels(binding.metadata.namespace!);
    if (!labels || !selectsLabels(selector, labels))
      return refuse(
        CredentialBindingReason.NotAllowed,
        `namespace ${binding.metadata.namespace} is not selected by Environment ${envName} (spec.credentialBindings.namespaceSelector): nothing was written`,
      );

    // 2. The connection, from this replica's share; one that exists but is not cached yet is looked for again.
    let conn = this.deps.connections.getConnection(ref.namespace, ref.integration, ref.connectionId);
    if (!conn || conn.resource.metadata.deletionTimestamp) {
      const identity = await this.deps.connections.findConnectionIdentity(
        ref.namespace,
        connectionObjectName(ref.integration, ref.connectionId),
      );
      if (identity && !identity.metadata.deletionTimestamp && !conn)
        return {
          write: undefined,
          ...unknown("the connection is not in this controller's cache yet"),
          requeueAfterMs: NOT_CACHED_RETRY_MS,
        };
      return refuse(
        CredentialBindingReason.ConnectionNotFound,
        `connection ${connection} does not exist: the Secret's values were emptied`,
      );
    }
    const reauthorizationRequired = () =>
      refuse(
        CredentialBindingReason.ReauthorizationRequired,
        `the provider refused connection ${connection} (re-authorization required): the Secret's values were emptied`,
      );
    if (
      needsReauthorization(conn) ||
      findCondition(conn.resource.status?.conditions, ConnectionCondition.NeedsReauthorization)?.status === 'True'
    )
      return reauthorizationRequired();

    // 3. The token, refreshed first when due within the binding's margin (or missing where the mode mints one).
    const marginSeconds = binding.spec.refreshBeforeSeconds ?? 120;
    const now = this.deps.clock.now();
    let refreshFailure: string | undefined;
    const due = (c: StoredCredentials) => {
      const exp = expiresAtOf(c);
      return exp !== undefined && exp.getTime() - refreshMarginMs(lifetimeSecondsOf(c), this.deps.settings, marginSeconds) <= now;
    };
    const missing = accessTokenOf(conn.credentials) === undefined;
    if ((due(conn.credentials) || missing) && this.deps.isRefreshable(conn.credentials)) {
      try {
        conn = await this.deps.refresh(ref.namespace, ref.integration, ref.connectionId, { marginSeconds, force: missing });
      } catch (err) {
        // Refused for good on this binding's own refresh: as when the schedule's refresh was (the
        // controller marks the connection; the token the grant stood behind is not handed out).
        if (err instanceof RefreshError && err.permanent && err.code === 'reauthorization_required') return reauthorizationRequired();
        refreshFailure = err instanceof LatchkeyError ? `${err.code}: ${err.message}` : 'the refresh failed';
      }
    }
    const token = accessTokenOf(conn.credentials);
    if (token === undefined)
      return refuse(
        CredentialBindingReason.NoAccessToken,
        `connection ${connection} (${conn.credentials.type}) holds no access token: nothing was written`,
        'keep',
      );
    const expires = expiresAtOf(conn.credentials);
    if (expires && expires.getTime() <= now) {
      const c = {
        status: 'False' as const,
        reason: CredentialBindingReason.TokenExpired,
        message: `the token expired at ${expires.toISOString()}${refreshFailure ? ` and its refresh failed (${refreshFailure})` : ''}`,
      };
      // A token no refresh can renew waits for new credentials (their Secret's change brings it back).
      const requeueAfterMs = this.deps.isRefreshable(conn.credentials) ? REFRESH_RETRY_MS : BINDING_RECHECK_MS;
      return { write: undefined, synced: c, ready: c, requeueAfterMs };
    }

    // 4. The Secret's values from the template.
    let data: Record<string, string>;
    try {
      data = fillBindingTemplate(template, {
        accessToken: token,
        expiresAt: expires?.toISOString(),
        baseUrl: this.baseUrl(conn),
        connectionId: ref.connectionId,
        integration: ref.integration,
        provider: conn.resource.spec.provider,
        connectionConfig: conn.resource.spec.connectionConfig,
      });
    } catch (err) {
      const message = err instanceof LatchkeyError ? err.message : 'the template cannot be filled';
      return refuse(CredentialBindingReason.TemplateInvalid, `${message}: nothing was written`, 'keep');
    }
    const expiresAt = expires?.toISOString();
    const until = expires ? `, valid until ${expiresAt}` : '';
    const ready = {
      status: 'True' as const,
      reason: CredentialBindingReason.Synced,
      message: `the Secret holds the current token of ${connection}${until}`,
    };
    const synced = refreshFailure
      ? {
          status: 'False' as const,
          reason: CredentialBindingReason.RefreshFailing,
          message: `the token is due and its refresh failed (${refreshFailure}); the Secret keeps it until it expires`,
        }
      : ready;
    // Looked at again when due within the margin (the scheduler's refresh normally comes first, and its
    // Secret change brings the binding back within seconds), and at least every recheck. Still due after
    // asking (the refresh floor held it back, or nothing renews this token): not before the retry
    // interval, nor after the expiry.
    const dueIn = expires
      ? expires.getTime() - refreshMarginMs(lifetimeSecondsOf(conn.credentials), this.deps.settings, marginSeconds) - now
      : Infinity;
    const untilExpiry = expires ? expires.getTime() - now : Infinity;
    const requeueAfterMs =
      refreshFailure || dueIn <= 0 ? Math.max(1_000, Math.min(REFRESH_RETRY_MS, untilExpiry)) : Math.min(dueIn, BINDING_RECHECK_MS);
    return { write: { content: { data, expiresAt, connection }, create: true }, token: true, synced, ready, expiresAt, requeueAfterMs };
  }

  /** The provider's API base URL for this connection (none when it has none, or a configuration value is missing). */
  private baseUrl(conn: StoredConnection): string | undefined {
    const base = this.deps.catalog.getProvider(conn.resource.spec.provider)?.spec.proxy?.baseUrl;
    if (!base) return undefined;
    try {
      return fillTemplate(base, conn.resource.spec.connectionConfig);
    } catch {
      return undefined;
    }
  }

  /** Patches every rollout restart target; the failures' description, or undefined. */
  private async restart(binding: CredentialBindingResource): Promise<string | undefined> {
    const at = new Date(this.deps.clock.now()).toISOString();
    const failures: string[] = [];
    for (const t of binding.spec.rolloutRestartTargets ?? []) {
      try {
        await this.deps.bindings.restartWorkload(binding.metadata.namespace!, t.kind, t.name, at);
      } catch (err) {
        const status = (err as { code?: unknown }).code;
        failures.push(
          `${t.kind} ${t.name}: ${status === 404 ? 'not found' : status === 403 ? 'forbidden (the chart grants restarts with credentialBindings.rolloutRestarts)' : 'patch failed'}`,
        );
        this.deps.logger.warn(
          { namespace: binding.metadata.namespace, binding: binding.metadata.name, target: `${t.kind}/${t.name}`, status },
          'rollout restart failed',
        );
      }
    }
    return failures.length ? `the Secret was written; rollout restart failed: ${failures.join('; ')}` : undefined;
  }

  private async writeStatus(binding: CredentialBindingResource, secretName: string, verdict: Verdict, wrote: boolean): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.bindings.updateStatus(
      binding.metadata.namespace!,
      binding.metadata.name,
      (status: CredentialBindingStatus, current) => {
        const next: CredentialBindingStatus = {
          ...status,
          observedGeneration: current.metadata.generation,
          secretName,
          conditions: setConditions(
            status.conditions,
            [
              { type: CredentialBindingCondition.Synced, ...verdict.synced },
              { type: CredentialBindingCondition.Ready, ...verdict.ready },
            ],
            current.metadata.generation,
            now,
          ),
        };
        if (verdict.expiresAt) next.expiresAt = verdict.expiresAt;
        else delete next.expiresAt;
        if (wrote) next.lastSyncTime = new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
        return JSON.stringify(next) === JSON.stringify(status) ? undefined : next;
      },
    );
  }
}

/** A namespace's Environment: the oldest (the others are duplicates, docs/architecture.md). */
function environmentOf(environments: EnvironmentResource[]): EnvironmentResource | undefined {
  return [...environments].sort((a, b) => String(a.metadata.creationTimestamp).localeCompare(String(b.metadata.creationTimestamp)))[0];
}

/** `namespace/integration/connectionId`: how a binding's connection is named in messages and on the Secret. */
function bindingConnection(b: CredentialBindingResource): string {
  const ref = b.spec.connectionRef;
  return `${ref.namespace}/${ref.integration}/${ref.connectionId}`;
}

function nonEmpty(template: Record<string, string> | undefined): Record<string, string> | undefined {
  return template && Object.keys(template).length ? template : undefined;
}

function unknown(message: string): Pick<Verdict, 'synced' | 'ready'> {
  const c = { status: 'Unknown' as const, reason: CredentialBindingReason.Pending, message };
  return { synced: c, ready: c };
}
