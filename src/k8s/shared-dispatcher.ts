import type { KubeConfig, RequestContext } from './kubernetes-client.js';
import { interceptors } from 'undici';

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

/** How long one shared dispatcher is used before the next call's fresh one replaces it. */
const RENEW_MS = 5 * 60_000;

const SHARED = Symbol('latchkey.sharedDispatcher');

/**
 * client-node (2.x) builds a new undici Agent for every API call, so every call opens its own TLS
 * connection: a handshake each time, in this process and in the API server (bench/imports.ts
 * profiled most of an import's CPU in TLS set-up). This makes every client of `kc` send its calls
 * through one Agent (connections kept alive and reused). The Agent is replaced every few minutes by
 * a fresh one built from the configuration as it is then, so rotated client certificates or CA files
 * are still picked up; the old one closes once its calls are done. Watches are not affected.
 *
 * A kept connection can be dropped under a call (API server restart, idle timeout of a load
 * balancer): idempotent calls (GET, PUT, DELETE) are retried on a fresh connection then, as one
 * connection per call never needed. A POST is not retried: it fails as any failed call does.
 */
export function shareConnections(kc: KubeConfig): void {
  const marked = kc as KubeConfig & { [SHARED]?: true };
  if (marked[SHARED]) return;
  marked[SHARED] = true;
  const apply = kc.applySecurityAuthentication.bind(kc);
  let shared: { agent: Dispatcher; dispatcher: Dispatcher; since: number } | undefined;
  kc.applySecurityAuthentication = async (context: RequestContext) => {
    await apply(context);
    const fresh = context.getDispatcher();
    // No TLS options (plain HTTP to a local proxy): fetch's global dispatcher already pools.
    if (!fresh) return;
    const now = Date.now();
    if (!shared || now - shared.since > RENEW_MS) {
      const old = shared?.agent;
      shared = { agent: fresh, dispatcher: fresh.compose(interceptors.retry({ maxRetries: 2, minTimeout: 50 })), since: now };
      old?.close().catch(() => undefined);
    } else {
      // Never used: it holds no connection, closing it only releases it at once.
      fresh.close().catch(() => undefined);
    }
    context.setDispatcher(shared.dispatcher);
  };
}
