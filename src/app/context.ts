import type { KubeConfig } from '../k8s/client.js';
import type { Registry } from 'prom-client';
import { systemClock, type Clock } from '../domain/clock.js';
import { createGuardedFetch } from '../egress/fetch.js';
import { EgressGuard } from '../egress/guard.js';
import { KubeStore } from '../k8s/store.js';
import type { Config } from './config.js';
import type { Logger } from './log.js';
import { createRegistry } from './metrics.js';

/** What the controller and the HTTP server are built from; passed in, never imported as singletons. */
export interface AppContext {
  config: Config;
  logger: Logger;
  kc: KubeConfig;
  store: KubeStore;
  clock: Clock;
  metrics: Registry;
  /** Outbound HTTP (token endpoints, webhooks, app installation tokens), through {@link egress}. */
  fetch: typeof fetch;
  /** Checks every address an outbound call connects to (the proxy's agents use it directly). */
  egress: EgressGuard;
}

export interface ContextOptions {
  config: Config;
  logger: Logger;
  kc: KubeConfig;
  clock?: Clock;
  /** A guard with an injected resolver (tests); otherwise one from config.egressAllow and the system resolver. */
  egress?: EgressGuard;
  metrics?: Registry;
  /** An existing store (tests that share one); otherwise a new one watching config.watchNamespaces. */
  store?: KubeStore;
}

/**
 * The one place an {@link AppContext} is assembled. The store is created but not started: the
 * caller starts it (and stops it) as part of its own lifecycle.
 */
export function createContext(opts: ContextOptions): AppContext {
  const { config, logger, kc } = opts;
  const egress = opts.egress ?? new EgressGuard({ allow: config.egressAllow });
  // Said at start-up, so an allowlist that opens private addresses is never a surprise.
  if (egress.allowlist.isEmpty) logger.info('egress: outbound calls reach public addresses only');
  else
    logger.warn(
      { egressAllow: egress.allowlist.describe() },
      'egress: outbound calls may also reach these private addresses and names (LATCHKEY_EGRESS_ALLOW)',
    );
  return {
    config,
    logger,
    kc,
    store: opts.store ?? new KubeStore(kc, { namespaces: config.watchNamespaces, logger }),
    clock: opts.clock ?? systemClock,
    metrics: opts.metrics ?? createRegistry(),
    fetch: createGuardedFetch(egress).fetch,
    egress,
  };
}
