import type { KubeConfig } from '../k8s/client.js';
import type { Registry } from 'prom-client';
import { systemClock, type Clock } from '../domain/clock.js';
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
  /** Outbound HTTP (token endpoints, webhooks, proxied requests). */
  fetch: typeof fetch;
}

export interface ContextOptions {
  config: Config;
  logger: Logger;
  kc: KubeConfig;
  clock?: Clock;
  fetch?: typeof fetch;
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
  return {
    config,
    logger,
    kc,
    store: opts.store ?? new KubeStore(kc, { namespaces: config.watchNamespaces, logger }),
    clock: opts.clock ?? systemClock,
    metrics: opts.metrics ?? createRegistry(),
    fetch: opts.fetch ?? fetch,
  };
}
