/**
 * Receives a provider's webhook for one Integration: answers the handshake, checks the signature the
 * Provider declares, finds the connections the event names, and stores one `forward` delivery in the
 * webhook outbox (delivered, signed, at least once by the dispatcher). The provider gets its 2xx once
 * the delivery is stored. No HTTP framework here: src/http/provider-webhook-routes.ts calls it.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { AppContext } from '../context/app-context.js';
import { primaryOf } from '../k8s/primary-environment.js';
import { TokenBuckets } from '../domain/token-bucket.js';
import { FlowRecords } from '../k8s/flow-records.js';
import { HandshakeWindows, handshakeSecrets } from '../k8s/handshake-windows.js';
import { INTEGRATION_SECRET_KEYS, type ConnectionResource, type IntegrationResource, type ProviderWebhooksSpec } from '../k8s/resources.js';
import { WebhookOutbox } from '../k8s/webhook-outbox.js';
import { Counter, metric, type Registry } from '../platform/metrics.js';
import { signedHandshake, unsignedHandshake, type HandshakeAnswer } from './provider-handshakes.js';
import { verifySignature, type ReceivedRequest } from './provider-signature.js';
import { sourceValues, valuesAt } from './provider-values.js';

/** Body size when the Provider names none, and the most any may name (one outbox ConfigMap holds < 1 MiB). */
export const DEFAULT_MAX_BODY_BYTES = 512 * 1024;
export const MAX_BODY_BYTES = 900 * 1024;
/** How long a delivery ID is remembered: Stripe retries for up to three days, the longest of the catalog. */
const DUPLICATE_WINDOW_MS = 72 * 3600_000;

export type ReceiveOutcome = 'forwarded' | 'duplicate' | 'dropped' | 'handshake' | 'unverified' | 'too_large' | 'rate_limited' | 'failed';

export interface ProviderWebhookAnswer {
  status: number;
  contentType: HandshakeAnswer['contentType'];
  body: string;
  headers?: Record<string, string>;
}

/** The Integration an endpoint names, with its Provider's webhook settings. */
export interface WebhookTarget {
  namespace: string;
  integration: IntegrationResource;
  provider: string;
  spec: ProviderWebhooksSpec;
}

/** A forwarded event as the application receives it (the `forward` webhook's body). */
export interface ForwardWebhookBody {
  from: string;
  type: 'forward';
  provider: string;
  providerConfigKey: string;
  environment: string;
  /** Set when exactly one connection matched (the field Nango's forward webhook has). */
  connectionId?: string;
  connections: Array<{ connectionId: string; endUser: { endUserId: string | undefined; tags: Record<string, string> } }>;
  /** The provider's delivery ID, when it sends one. */
  deliveryId?: string;
  /** The provider's payload: its JSON as sent, or the raw text when the body is not JSON. */
  payload: unknown;
}

type Deps = Pick<
  AppContext,
  'kc' | 'caches' | 'connections' | 'connectionScans' | 'catalog' | 'clock' | 'logger' | 'metrics' | 'oplog' | 'config'
> & {
  outbox?: Pick<WebhookOutbox, 'enqueue'>;
  markers?: Pick<FlowRecords, 'markUsed' | 'unmarkUsed'>;
  windows?: Pick<HandshakeWindows, 'accept'>;
};

const received = (registry: Registry) =>
  metric(
    registry,
    'latchkey_provider_webhooks_total',
    (registers) =>
      new Counter({
        name: 'latchkey_provider_webhooks_total',
        help: 'Provider webhooks received, by provider and outcome (forwarded, duplicate, dropped, handshake, unverified, too_large, rate_limited, failed).',
        labelNames: ['provider', 'outcome'] as const,
        registers,
      }),
  );

export class ProviderWebhookReceiver {
  private readonly outbox: Pick<WebhookOutbox, 'enqueue'>;
  private readonly markers: Pick<FlowRecords, 'markUsed' | 'unmarkUsed'>;
  private readonly budget: TokenBuckets;
  private readonly windows: Pick<HandshakeWindows, 'accept'>;

  constructor(private readonly deps: Deps) {
    this.outbox = deps.outbox ?? new WebhookOutbox(deps.kc);
    this.windows = deps.windows ?? new HandshakeWindows(deps.caches);
    this.markers = deps.markers ?? new FlowRecords(deps.kc);
    const perMinute = deps.config.providerWebhookRatePerIntegration;
    this.budget = new TokenBuckets(perMinute, perMinute, () => deps.clock.now());
  }

  /** The Integration and its Provider's webhook settings, or undefined (no such Integration, or its Provider takes no webhooks). */
  target(namespace: string, name: string): WebhookTarget | undefined {
    const integration = this.deps.catalog.getIntegration(namespace, name);
    if (!integration || integration.metadata.deletionTimestamp) return undefined;
    const spec = this.deps.catalog.getProvider(integration.spec.provider)?.spec.webhooks;
    return spec ? { namespace, integration, provider: integration.spec.provider, spec } : undefined;
  }

  maxBodyBytes(target: WebhookTarget): number {
    return Math.min(target.spec.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, MAX_BODY_BYTES);
  }

  /** Records a request refused before its body was read whole (too large). */
  refuseTooLarge(target: WebhookTarget): ProviderWebhookAnswer {
    const limit = this.maxBodyBytes(target);
    this.record(target, 'too_large', [`${target.provider} webhook refused: the body is larger than ${limit} bytes.`], {
      unverifiedSender: true,
    });
    return error(413, 'payload_too_large', `The body is larger than ${limit} bytes.`);
  }

  async receive(target: WebhookTarget, req: ReceivedRequest & { query: URLSearchParams }): Promise<ProviderWebhookAnswer> {
    const { spec, provider, namespace, integration } = target;
    const early = unsignedHandshake(spec.handshake?.type, req.query);
    if (early) {
      // Unsigned: it spends the handshakes' own budget (forgeries cannot starve it); anyone may send one.
      const wait = this.budget.take(`${namespace}/${integration.metadata.name}/handshake`);
      if (wait > 0) return this.rateLimited(provider, wait);
      this.record(target, 'handshake', [`${provider} handshake (${spec.handshake!.type}) answered.`], { unverifiedSender: true });
      return early;
    }
    const hookSecret = spec.handshake?.type === 'asana-hook-secret' ? req.headers['x-hook-secret'] : undefined;
    if (hookSecret !== undefined) return this.hookSecretHandshake(target, hookSecret);
    const verdict = this.verify(target, req);
    // Refused requests spend their own budget: a flood of forgeries neither spends the provider's nor
    // writes an operation log entry each.
    const key = `${namespace}/${integration.metadata.name}${verdict.ok ? '' : '/refused'}`;
    const wait = this.budget.take(key);
    if (wait > 0) return this.rateLimited(provider, wait);
    if (!verdict.ok) {
      this.record(target, 'unverified', [`${provider} webhook refused: ${verdict.reason}.`], { unverifiedSender: true });
      return error(401, 'invalid_signature', 'The webhook signature could not be verified.');
    }
    const handshake = signedHandshake(spec.handshake?.type, req.json, verdict.secret);
    if (handshake) {
      this.record(target, 'handshake', [`${provider} handshake (${spec.handshake!.type}) answered.`]);
      return handshake;
    }
    return this.forward(target, req, verdict.connectionId);
  }

  /**
   * Checks the request against each scheme the Provider declares (its `signature`, then its
   * `alternatives`) with the secrets each may use: the key of the Integration's Secret, or the secrets
   * handshakes handed over (asana-hook-secret), each with the connection whose call created its webhook.
   */
  private verify(target: WebhookTarget, req: ReceivedRequest): Verified | { ok: false; reason: string } {
    const { spec, namespace, integration } = target;
    const ref = integration.spec.clientSecretRef?.name;
    const now = this.deps.clock.now();
    const reasons: string[] = [];
    for (const signature of [spec.signature, ...(spec.alternatives ?? [])]) {
      const candidates: Array<{ secret: string; connectionId?: string }> = [];
      if (spec.handshake?.type === 'asana-hook-secret') {
        candidates.push(...handshakeSecrets(ref ? this.deps.catalog.getReferencedSecret(namespace, ref) : undefined));
        if (candidates.length === 0) reasons.push('no webhook of this integration completed its handshake');
      } else {
        const secretKey = secretKeyOf(signature, req.json);
        const secret = ref ? this.deps.catalog.readSecretValue(namespace, ref, secretKey) : undefined;
        if (secret) candidates.push({ secret });
        else reasons.push(`the Integration's Secret has no ${secretKey}`);
      }
      for (const candidate of candidates) {
        const verdict = verifySignature(signature, req, candidate.secret, now);
        if (verdict.ok) return { ok: true, ...candidate };
        reasons.push(verdict.reason);
      }
    }
    // The reason of a scheme the request tried (its header is there) says most.
    return { ok: false, reason: reasons.find((r) => !r.startsWith('no ')) ?? reasons[0] ?? 'no scheme' };
  }

  /**
   * Asana's handshake: an unauthenticated POST handing over the secret later events are signed with.
   * Taken only inside a window a proxied webhook creation of this Integration opened (on any replica);
   * outside one it is refused, logged, and nothing is stored.
   */
  private async hookSecretHandshake(target: WebhookTarget, value: string): Promise<ProviderWebhookAnswer> {
    const { provider, namespace, integration } = target;
    const wait = this.budget.take(`${namespace}/${integration.metadata.name}/handshake`);
    if (wait > 0) return this.rateLimited(provider, wait);
    const ref = integration.spec.clientSecretRef?.name;
    let taken = false;
    try {
      taken = ref !== undefined && HOOK_SECRET.test(value) && (await this.windows.accept(namespace, ref, value, this.deps.clock.now()));
    } catch (err) {
      this.record(target, 'failed', [`${provider} handshake could not be checked (${errorText(err)}): the provider is asked to retry.`], {
        unverifiedSender: true,
      });
      return error(503, 'unavailable', 'The handshake could not be stored; retry later.');
    }
    if (!taken) {
      this.record(
        target,
        'unverified',
        [`${provider} handshake refused: no webhook creation of this integration is in flight; nothing stored.`],
        { unverifiedSender: true },
      );
      return error(401, 'handshake_refused', 'No webhook creation of this integration is in flight through Latchkey.');
    }
    this.record(target, 'handshake', [`${provider} handshake (asana-hook-secret) answered inside a webhook creation window.`]);
    return { ...accepted(), headers: { 'x-hook-secret': value } };
  }

  private rateLimited(provider: string, waitMs: number): ProviderWebhookAnswer {
    received(this.deps.metrics).inc({ provider, outcome: 'rate_limited' });
    return {
      ...error(429, 'rate_limited', 'Too many webhooks for this integration.'),
      headers: { 'retry-after': String(Math.max(1, Math.ceil(waitMs / 1000))) },
    };
  }

  private async forward(target: WebhookTarget, req: ReceivedRequest, creator?: string): Promise<ProviderWebhookAnswer> {
    const { spec, provider, namespace } = target;
    const name = target.integration.metadata.name;
    const deliveryId = spec.deliveryId ? sourceValues(spec.deliveryId, req.headers, req.json)[0] : undefined;
    const accounts = spec.account ? accountsOf(spec.account, req) : [];
    // A secret a handshake handed over names the connection whose proxied call created the webhook.
    const created = creator !== undefined ? (await this.deps.connections.findConnection(namespace, name, creator))?.resource : undefined;
    const connections = created
      ? [created]
      : spec.account
        ? await this.matching(namespace, name, spec.account.connectionConfigKey, accounts)
        : [];
    const routed = `routed to ${connections.length ? connections.map((c) => c.spec.connectionId).join(', ') : 'no connection'}${
      creator !== undefined ? ' (the creator of the webhook)' : spec.account ? ` (account ${accounts.join(', ') || 'absent'})` : ''
    }`;
    const about = `${provider} webhook${deliveryId ? ` ${deliveryId}` : ''} verified, ${routed}`;
    if (spec.heartbeat && valuesAt(req.json, spec.heartbeat.bodyPath).some((v) => Array.isArray(v) && v.length === 0)) {
      this.record(target, 'dropped', [`${about}; a heartbeat (no events): not forwarded.`], { connections });
      return accepted();
    }
    const env = primaryOf(this.deps.catalog.listEnvironments(namespace));
    if (!env?.spec.webhooks?.url) {
      this.record(target, 'dropped', [`${about}; not forwarded: the Environment has no webhook URL.`], { connections });
      return accepted();
    }
    const envelope: Omit<ForwardWebhookBody, 'payload'> = {
      from: provider,
      type: 'forward',
      provider,
      providerConfigKey: name,
      environment: env.metadata.name,
      ...(connections.length === 1 ? { connectionId: connections[0]!.spec.connectionId } : {}),
      connections: connections.map((c) => ({
        connectionId: c.spec.connectionId,
        endUser: { endUserId: c.spec.endUser?.id, tags: c.spec.endUser?.tags ?? {} },
      })),
      ...(deliveryId ? { deliveryId } : {}),
    };
    // The payload goes as the provider sent it, not parsed and serialised again: JSON.stringify overflows
    // the stack on an event nested some thousands deep (signed, so refusing it would lose it to retries),
    // and large integers or key order would not survive the round trip. The text parsed as JSON (req.json),
    // so it is one JSON value, whitespace around it allowed.
    const payload = req.json !== undefined ? req.body.toString('utf8') : JSON.stringify(req.body.toString('utf8'));
    const text = `${JSON.stringify(envelope).slice(0, -1)},"payload":${payload}}`;
    const limit = MAX_BODY_BYTES + 64 * 1024;
    if (Buffer.byteLength(text) > limit) {
      // Verified, so in the environment's ring (not the one of requests nobody authenticated).
      this.record(target, 'too_large', [`${about}; not forwarded: the forward webhook would be larger than ${limit} bytes.`], {
        connections,
      });
      return error(413, 'payload_too_large', `The event is too large to forward (over ${limit} bytes with its envelope).`);
    }
    const marker = deliveryId ? `provider-webhook/${name}/${deliveryId}` : undefined;
    const now = this.deps.clock.now();
    const unstored = (err: unknown) => {
      this.record(target, 'failed', [`${about}; could not be stored (${errorText(err)}): the provider is asked to retry.`], {
        connections,
      });
      return error(503, 'unavailable', 'The webhook could not be stored; retry later.');
    };
    let first = true;
    try {
      if (marker) first = await this.markers.markUsed(namespace, marker, now + DUPLICATE_WINDOW_MS);
    } catch (err) {
      return unstored(err);
    }
    if (!first) {
      this.record(target, 'duplicate', [`${about}; a duplicate of a delivery already received: not forwarded again.`], { connections });
      return accepted();
    }
    // The same webhook-id for the same provider delivery: a retry racing the first copy is one outbox entry.
    const id = `msg_${marker ? createHash('sha256').update(`${namespace}/${marker}`).digest('hex').slice(0, 32) : randomUUID().replace(/-/g, '')}`;
    try {
      await this.outbox.enqueue(namespace, { id, environment: env.metadata.name, body: text }, now);
    } catch (err) {
      if (marker) await this.markers.unmarkUsed(namespace, marker).catch(() => undefined);
      return unstored(err);
    }
    this.record(target, 'forwarded', [`${about}; forwarded as ${id}.`], { connections });
    return accepted();
  }

  /** Connections of this Integration whose configuration value under `key` is one of the accounts. */
  private async matching(namespace: string, integration: string, key: string, accounts: string[]): Promise<ConnectionResource[]> {
    if (accounts.length === 0) return [];
    const wanted = new Set(accounts);
    const found: ConnectionResource[] = [];
    for await (const c of this.deps.connectionScans.scanConnections(namespace, { integrations: [integration] })) {
      const value = c.spec.connectionConfig?.[key];
      if ((typeof value === 'string' || typeof value === 'number') && wanted.has(String(value))) found.push(c);
    }
    return found;
  }

  private record(
    target: WebhookTarget,
    outcome: ReceiveOutcome,
    messages: string[],
    opts: { connections?: ConnectionResource[]; unverifiedSender?: boolean } = {},
  ): void {
    const connections = opts.connections ?? [];
    received(this.deps.metrics).inc({ provider: target.provider, outcome });
    const one = connections.length === 1 ? connections[0] : undefined;
    const ok = outcome === 'forwarded' || outcome === 'duplicate' || outcome === 'handshake';
    this.deps.oplog?.record({
      namespace: target.namespace,
      operation: 'webhook',
      step: `receive ${outcome}`,
      outcome: ok ? 'success' : 'failure',
      integration: target.integration.metadata.name,
      ...(one ? { connectionId: one.spec.connectionId, connection: { name: one.metadata.name }, endUserId: one.spec.endUser?.id } : {}),
      // A request nobody authenticated (a refusal, an unsigned handshake) goes to the log's ring of
      // such requests: a flood of them cannot evict what the tenants' own actions wrote.
      ...(opts.unverifiedSender ? { unverifiedSender: true } : {}),
      messages,
    });
  }
}

/** Secret keys of one provider webhook: `<key>.<ID>`, the ID as Secret keys may spell it. */
const WEBHOOK_ID = /^[A-Za-z0-9_-]{1,200}$/;

/**
 * The key of the Integration's Secret holding the signing secret; with `secretKeyFrom`, the one of the
 * provider webhook the (not yet verified) body names: a wrong ID only picks a key whose secret fails.
 */
function secretKeyOf(signature: ProviderWebhooksSpec['signature'], json: unknown): string {
  const key = signature.secretKey ?? INTEGRATION_SECRET_KEYS.webhookSecret;
  if (!signature.secretKeyFrom) return key;
  const id = sourceValues({ bodyPath: signature.secretKeyFrom.bodyPath }, {}, json)[0];
  return id && WEBHOOK_ID.test(id) ? `${key}.${id}` : `${key}.(no webhook ID)`;
}

/** The account values an event names, with the declared suffix taken off (a shop domain → the shop). */
function accountsOf(account: NonNullable<ProviderWebhooksSpec['account']>, req: ReceivedRequest): string[] {
  const values = sourceValues(account, req.headers, req.json);
  const suffix = account.suffix;
  return suffix ? values.filter((v) => v.endsWith(suffix)).map((v) => v.slice(0, -suffix.length)) : values;
}

/** What a handshake secret may be (Asana's are 64 hex characters): printable, bounded. */
const HOOK_SECRET = /^[\x21-\x7e]{1,256}$/;

type Verified = { ok: true; secret: string; connectionId?: string };

function accepted(): ProviderWebhookAnswer {
  return { status: 200, contentType: 'application/json', body: '{"ok":true}' };
}

function error(status: number, code: string, message: string): ProviderWebhookAnswer {
  return { status, contentType: 'application/json', body: JSON.stringify({ error: { code, message } }) };
}

function errorText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, 200);
}
