import { randomUUID } from 'node:crypto';
import type { AppContext } from '../context/app-context.js';
import { primaryOf } from '../k8s/primary-environment.js';
import type { ConnectionResource, EnvironmentResource } from '../k8s/resources.js';
import { WebhookOutbox } from '../k8s/webhook-outbox.js';
import { backoffDelay } from '../domain/backoff.js';

export type AuthOperation = 'creation' | 'override' | 'refresh';

/**
 * Body of an auth webhook: the spec's fields plus those of Nango's `NangoAuthWebhookBody`
 * (`from`, providerConfigKey, provider, environment, authMode, error), so handlers written
 * against Nango's SDK types compile and run.
 */
export interface AuthWebhookBody {
  from: 'latchkey';
  type: 'auth';
  operation: AuthOperation;
  success: boolean;
  connectionId: string;
  endUser: { endUserId: string | undefined; tags: Record<string, string> };
  providerConfigKey: string;
  provider: string;
  environment: string;
  /** The connection's auth mode; 'unknown' when neither it nor its provider can be found any more. */
  authMode: string;
  error?: { type: string; message: string };
}

export interface AuthWebhookInput {
  namespace: string;
  operation: AuthOperation;
  success: boolean;
  connectionId: string;
  providerConfigKey: string;
  provider: string;
  endUser: { id?: string; tags?: Record<string, string> } | undefined;
  /** When the caller knows it; otherwise looked up (connection, then provider). */
  authMode?: string;
  error?: { type: string; message: string };
}

export type EnqueueResult = 'queued' | 'disabled' | 'no-url' | 'no-environment';

type Deps = Pick<AppContext, 'kc' | 'connections' | 'catalog' | 'clock' | 'logger'> & {
  /** The outbox to write to (default: one on `kc`); tests pass one that fails. */
  outbox?: Pick<WebhookOutbox, 'enqueue'>;
  /** Retries of a failed enqueue, in the background (default 8, backoff from 500 ms doubling to 30 s). */
  enqueueRetry?: { attempts: number; baseMs: number; maxMs: number };
};

/** What the caller gets: the first attempt's result, and when the background retries (if any) end. */
export interface EnqueueOutcome {
  result: EnqueueResult | 'retrying';
  settled: Promise<EnqueueResult | 'failed'>;
}

/** Whether the Environment wants this operation's webhook (each switch defaults to on, as in the CRD). */
function wanted(env: EnvironmentResource, operation: AuthOperation): boolean {
  const w = env.spec.webhooks ?? {};
  if (operation === 'creation') return w.sendOnCreation ?? true;
  if (operation === 'override') return w.sendOnOverride ?? true;
  return w.sendOnRefreshFailure ?? true;
}

/**
 * Queues an auth webhook in the cluster outbox (delivered at least once by the WebhookDispatcher of
 * any replica), when the namespace's Environment has a URL and the operation's switch is on. A
 * failed enqueue does not throw: it is retried in the background (`settled` tells how it ended).
 */
export async function enqueueAuthWebhook(deps: Deps, input: AuthWebhookInput): Promise<EnqueueOutcome> {
  const env = primaryOf(deps.catalog.listEnvironments(input.namespace));
  const done = (result: EnqueueResult): EnqueueOutcome => ({ result, settled: Promise.resolve(result) });
  if (!env) return done('no-environment');
  if (!env.spec.webhooks?.url) return done('no-url');
  if (!wanted(env, input.operation)) return done('disabled');
  const body: AuthWebhookBody = {
    from: 'latchkey',
    type: 'auth',
    operation: input.operation,
    success: input.success,
    connectionId: input.connectionId,
    endUser: { endUserId: input.endUser?.id, tags: input.endUser?.tags ?? {} },
    providerConfigKey: input.providerConfigKey,
    provider: input.provider,
    environment: env.metadata.name,
    authMode: await authModeOf(deps, input),
    ...(input.error ? { error: input.error } : {}),
  };
  const id = `msg_${randomUUID().replace(/-/g, '')}`;
  const delivery = { id, environment: env.metadata.name, body: JSON.stringify(body) };
  const outbox = deps.outbox ?? new WebhookOutbox(deps.kc);
  const log = { namespace: input.namespace, webhookId: id, operation: input.operation, providerConfigKey: input.providerConfigKey };
  const attempt = async (): Promise<EnqueueResult> => {
    // The same id every time: an enqueue that did land before failing is not queued twice.
    await outbox.enqueue(input.namespace, delivery, deps.clock.now());
    deps.logger.info(log, 'auth webhook queued');
    return 'queued';
  };
  try {
    const result = await attempt();
    return { result, settled: Promise.resolve(result) };
  } catch (err) {
    deps.logger.warn({ ...log, err: errorText(err) }, 'auth webhook could not be queued; retrying in the background');
  }
  // The connection is already saved: the end user's flow is not failed for the webhook, and the
  // enqueue is retried with backoff, bounded, then given up loudly.
  const retry = deps.enqueueRetry ?? { attempts: 8, baseMs: 500, maxMs: 30_000 };
  const settled = (async (): Promise<EnqueueResult | 'failed'> => {
    for (let n = 1; n <= retry.attempts; n++) {
      await new Promise((r) => setTimeout(r, backoffDelay(retry, n)).unref?.());
      try {
        return await attempt();
      } catch (err) {
        if (n === retry.attempts) {
          deps.logger.error({ ...log, attempts: n + 1, err: errorText(err) }, 'auth webhook lost: could not be queued');
        }
      }
    }
    return 'failed';
  })();
  return { result: 'retrying', settled };
}

function errorText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, 300);
}

/** From the connection when it exists, else from its provider (as Nango does, 'unknown' otherwise). */
async function authModeOf(deps: Deps, input: AuthWebhookInput): Promise<string> {
  if (input.authMode) return input.authMode;
  const connection = await deps.connections.findConnection(input.namespace, input.providerConfigKey, input.connectionId);
  return connection?.resource.spec.authMode ?? deps.catalog.getProvider(input.provider)?.spec.authMode ?? 'unknown';
}

/**
 * For the controller: a refresh of this connection failed for good. Queues the `refresh` webhook
 * (`success: false`, with the error) when the Environment's `sendOnRefreshFailure` is on.
 * The error message must not contain a credential.
 */
export function enqueueRefreshFailedWebhook(
  deps: Deps,
  connection: ConnectionResource,
  error: { type?: string; message: string },
): Promise<EnqueueOutcome> {
  return enqueueAuthWebhook(deps, {
    namespace: connection.metadata.namespace!,
    operation: 'refresh',
    success: false,
    connectionId: connection.spec.connectionId,
    providerConfigKey: connection.spec.integration,
    provider: connection.spec.provider,
    endUser: connection.spec.endUser,
    authMode: connection.spec.authMode,
    error: { type: error.type ?? 'refresh_failed', message: error.message },
  });
}
