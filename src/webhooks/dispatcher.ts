import { connectionObjectName } from '../k8s/names.js';
import type { OperationLog } from '../oplog/operation-log.js';
import type { Registry } from 'prom-client';
import { primaryOf } from '../k8s/primary-environment.js';
import type { Clock } from '../domain/clock.js';
import type { CatalogStore } from '../k8s/store.js';
import { ENVIRONMENT_SECRET_KEYS } from '../k8s/resources.js';
import type { PendingDelivery, WebhookOutbox } from '../k8s/webhook-outbox.js';
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/log.js';
import { Counter, metric } from '../platform/metrics.js';
import { isRetryableWebhookStatus, parseRetryAfter } from '../domain/retry.js';
import { retryDelaySeconds } from './backoff.js';
import { nangoSignature, webhookHeaders } from './signing.js';
import { egressRefusal } from '../egress/guard.js';

export interface DispatcherOptions {
  outbox: WebhookOutbox;
  catalog: CatalogStore;
  fetch: typeof fetch;
  clock: Clock;
  logger: Logger;
  metrics: Registry;
  config: Pick<
    Config,
    | 'watchNamespaces'
    | 'webhookMaxAttempts'
    | 'webhookRetryWindowSeconds'
    | 'webhookConcurrency'
    | 'webhookNamespaceConcurrency'
    | 'webhookBackoffBaseSeconds'
    | 'webhookBackoffMaxSeconds'
  >;
  /** Who claims deliveries (the pod name). */
  identity: string;
  /** Each attempt and its answer is an operation log entry. */
  oplog?: OperationLog;
  pollIntervalMs?: number;
  requestTimeoutMs?: number;
  random?: () => number;
}

type Outcome = { ok: true } | { ok: false; retry: boolean; error: string; retryAfter?: number };

const deliveries = (registry: Registry) =>
  metric(
    registry,
    'latchkey_webhook_deliveries_total',
    (registers) =>
      new Counter({
        name: 'latchkey_webhook_deliveries_total',
        help: 'Webhook delivery attempts by result (delivered, retry, gave_up, rejected, dropped).',
        labelNames: ['result'] as const,
        registers,
      }),
  );

/**
 * Sends the auth webhooks queued in the cluster outbox: every replica watches it, claims due deliveries
 * with compare-and-swap, signs and POSTs them, deletes them on a 2xx, and reschedules them with
 * exponential backoff and jitter (honouring Retry-After) after anything else — a network error, a 5xx,
 * a 4xx (a receiver mid-deploy answers 404 or 401 too) — for `webhookRetryWindowSeconds` (24 hours by
 * default). Only 410 Gone stops at once: the receiver says the endpoint is gone for good.
 *
 * Deliveries run in a pool, not in batches: at most `webhookConcurrency` at once, at most
 * `webhookNamespaceConcurrency` of them for one namespace, taken from the namespaces in turn; so one
 * tenant's slow or hanging receiver occupies its own share and nobody else's. A claim lasts a little
 * longer than one request, so a delivery whose sender died is picked up again by anyone.
 */
export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private busy = false;
  private readonly log: Logger;
  private readonly pollMs: number;
  private readonly timeoutMs: number;
  /** Deliveries this replica is sending, by ID, and how many per namespace. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perNamespace = new Map<string, number>();
  /**
   * Deliveries whose last try here threw (the API server unreachable: the claim or the bookkeeping
   * failed) and the time before which this replica leaves them alone. Without it, the pass that each
   * finished delivery asks for would start the same delivery again at once, in a tight loop.
   */
  private readonly heldUntil = new Map<string, number>();

  constructor(private readonly opts: DispatcherOptions) {
    this.log = opts.logger.child({ component: 'webhooks' });
    this.pollMs = opts.pollIntervalMs ?? 1000;
    this.timeoutMs = opts.requestTimeoutMs ?? 10_000;
  }

  /**
   * Starts watching the outbox (so a poll reads a cache, not the API server) and polling it; a
   * delivery queued by any replica is picked up as soon as the watch reports it.
   */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.opts.outbox
      .watch(this.opts.config.watchNamespaces, this.log, () => this.kick())
      .catch((err: unknown) =>
        this.log.warn({ err: (err as Error).message }, 'could not watch the webhook outbox; listing it on every poll'),
      )
      .finally(() => this.schedule(0));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    await Promise.all(this.inFlight.values());
    await this.opts.outbox.stopWatching();
  }

  /** Runs a pass soon, unless one is running (it will see the new delivery, or the next poll will). */
  private kick(): void {
    if (this.stopped || this.busy) return;
    if (this.timer) clearTimeout(this.timer);
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.busy = true;
      this.running = this.tick()
        .catch((err: unknown) => this.log.warn({ err: (err as Error).message }, 'webhook outbox poll failed'))
        .finally(() => {
          this.busy = false;
          this.schedule(this.pollMs);
        });
    }, ms);
  }

  /**
   * One pass over the outbox: starts the due deliveries that fit in the pool, namespaces in turn,
   * without waiting for them (a finished delivery makes room and asks for another pass).
   */
  async tick(): Promise<void> {
    const now = this.opts.clock.now();
    const { webhookConcurrency: total, webhookNamespaceConcurrency: perNs } = this.opts.config;
    const pending = await this.opts.outbox.list(this.opts.config.watchNamespaces);
    for (const [id, until] of this.heldUntil) if (until <= now) this.heldUntil.delete(id);
    const queues = new Map<string, PendingDelivery[]>();
    for (const d of pending.sort((a, b) => a.nextAttemptAt - b.nextAttemptAt)) {
      if (d.nextAttemptAt > now || (d.claimedBy && d.claimedUntil > now) || this.inFlight.has(d.id) || this.heldUntil.has(d.id)) continue;
      queues.set(d.namespace, [...(queues.get(d.namespace) ?? []), d]);
    }
    // Round-robin over the namespaces: each turn starts one delivery of each namespace that has room.
    while (!this.stopped && this.inFlight.size < total && queues.size > 0) {
      for (const [namespace, queue] of queues) {
        if (this.inFlight.size >= total) break;
        const next = (this.perNamespace.get(namespace) ?? 0) < perNs ? queue.shift() : undefined;
        if (next) this.launch(next);
        if (!next || queue.length === 0) queues.delete(namespace);
      }
    }
  }

  private launch(d: PendingDelivery): void {
    this.perNamespace.set(d.namespace, (this.perNamespace.get(d.namespace) ?? 0) + 1);
    const done = this.deliver(d)
      .catch((err: unknown) => {
        this.heldUntil.set(d.id, this.opts.clock.now() + this.pollMs);
        this.log.warn({ namespace: d.namespace, webhookId: d.id, err: (err as Error).message }, 'webhook delivery failed');
      })
      .finally(() => {
        this.inFlight.delete(d.id);
        const left = (this.perNamespace.get(d.namespace) ?? 1) - 1;
        if (left > 0) this.perNamespace.set(d.namespace, left);
        else this.perNamespace.delete(d.namespace);
        this.kick();
      });
    this.inFlight.set(d.id, done);
  }

  private async deliver(listed: PendingDelivery): Promise<void> {
    const { outbox, catalog, clock, config } = this.opts;
    const counter = deliveries(this.opts.metrics);
    const d = await outbox.claim(listed, this.opts.identity, clock.now() + this.timeoutMs + 20_000);
    if (!d) return; // another replica has it
    const log = this.log.child({ namespace: d.namespace, webhookId: d.id });
    const envs = catalog.listEnvironments(d.namespace);
    const env = envs.find((e) => e.metadata.name === d.environment) ?? primaryOf(envs);
    const url = env?.spec.webhooks?.url;
    if (!env || !url) {
      log.warn('webhook dropped: the Environment has no webhook URL any more');
      counter.inc({ result: 'dropped' });
      await outbox.remove(d);
      return;
    }
    const key = catalog.readSecretValue(d.namespace, env.spec.secretRef.name, ENVIRONMENT_SECRET_KEYS.webhookSigningKey);
    let outcome: Outcome;
    const started = clock.now();
    if (!key) {
      outcome = { ok: false, retry: true, error: `Secret ${env.spec.secretRef.name} has no ${ENVIRONMENT_SECRET_KEYS.webhookSigningKey}` };
    } else {
      outcome = await this.post(url, key, d, env.spec.webhooks?.signatures?.includes('nango') ?? false);
    }
    const attempts = d.attempts + 1;
    this.logAttempt(d, attempts, outcome, url, clock.now() - started);
    if (outcome.ok) {
      counter.inc({ result: 'delivered' });
      log.info({ attempts }, 'webhook delivered');
      await outbox.remove(d);
      return;
    }
    if (!outcome.retry) {
      counter.inc({ result: 'rejected' });
      log.warn({ attempts, error: outcome.error }, 'webhook rejected by the receiver; not retried');
      await outbox.remove(d);
      return;
    }
    const delay = retryDelaySeconds(attempts, config, this.opts.random, outcome.retryAfter);
    const windowEnds = d.createdAt + config.webhookRetryWindowSeconds * 1000;
    if ((config.webhookMaxAttempts > 0 && attempts >= config.webhookMaxAttempts) || clock.now() + delay * 1000 > windowEnds) {
      counter.inc({ result: 'gave_up' });
      log.error({ attempts, error: outcome.error }, 'webhook not delivered within its retry window; giving up');
      await outbox.remove(d);
      return;
    }
    counter.inc({ result: 'retry' });
    log.info({ attempts, error: outcome.error, retryInSeconds: Math.round(delay * 10) / 10 }, 'webhook attempt failed; will retry');
    await outbox.reschedule(d, attempts, clock.now() + delay * 1000, outcome.error);
  }

  private logAttempt(d: PendingDelivery, attempts: number, outcome: Outcome, url: string, ms: number) {
    if (!this.opts.oplog) return;
    let about: {
      type?: string;
      operation?: string;
      provider?: string;
      connectionId?: string;
      providerConfigKey?: string;
      endUser?: { endUserId?: string };
    } = {};
    try {
      about = JSON.parse(d.body) as typeof about;
    } catch {
      // recorded without the connection
    }
    const { connectionId, providerConfigKey: integration } = about;
    const last = !outcome.ok && !outcome.retry;
    this.opts.oplog.record({
      namespace: d.namespace,
      operation: 'webhook',
      step: `attempt ${attempts}`,
      outcome: outcome.ok ? 'success' : 'failure',
      integration,
      connectionId,
      ...(connectionId && integration ? { connection: { name: connectionObjectName(integration, connectionId) } } : {}),
      endUserId: about.endUser?.endUserId,
      durationMs: ms,
      messages: [
        // A forward names its provider where an auth webhook names its operation.
        `${about.type ?? 'auth'} webhook (${about.operation ?? about.provider ?? 'unknown'}) ${d.id} to ${new URL(url).origin}: ${outcome.ok ? 'delivered' : outcome.error}`,
        ...(outcome.ok ? [] : [last ? 'Not retried any more.' : 'Will be retried.']),
      ],
    });
  }

  private async post(url: string, key: string, d: PendingDelivery, nango: boolean): Promise<Outcome> {
    const now = this.opts.clock.now();
    const headers: Record<string, string> = { ...webhookHeaders(key, d.id, Math.floor(now / 1000), d.body) };
    // Asked for by Environments whose applications verify webhooks with Nango's SDKs.
    if (nango) headers['x-nango-hmac-sha256'] = nangoSignature(key, d.body);
    try {
      const res = await this.opts.fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'latchkey-webhooks', ...headers },
        body: d.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      await res.body?.cancel().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) return { ok: true };
      return {
        ok: false,
        retry: isRetryableWebhookStatus(res.status),
        error: `receiver answered ${res.status}`,
        retryAfter: seconds(parseRetryAfter(res.headers.get('retry-after'), now)),
      };
    } catch (err) {
      // Retried: the operator may fix the allowlist; the Environment shows WebhookURLRefused meanwhile.
      const refusal = egressRefusal(err);
      if (refusal) return { ok: false, retry: true, error: refusal.message };
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      return { ok: false, retry: true, error: `network error: ${cause ?? (err as Error).name}` };
    }
  }
}

const seconds = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);
