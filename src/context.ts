import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { Config } from './config.js';
import type { KubeStore } from './k8s/store.js';
import type { Logger } from './log.js';

/** Time source, injected so tests can move time without touching timers they don't own. */
export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };

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
