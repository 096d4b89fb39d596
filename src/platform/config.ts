import { z } from 'zod';
import { EgressAllowlist } from '../egress/allowlist.js';

/** Process configuration, read once from environment variables (documented in the README). */
const ConfigSchema = z.object({
  LATCHKEY_LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  LATCHKEY_HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  LATCHKEY_CONTROLLER_PORT: z.coerce.number().int().min(0).max(65535).default(8081),
  LATCHKEY_PUBLIC_BASE_URL: z.url().optional(),
  LATCHKEY_WATCH_NAMESPACES: z.string().default(''),
  LATCHKEY_CREDENTIAL_BINDINGS: z.stringbool().default(true),
  LATCHKEY_BINDING_NAMESPACES: z.string().default(''),
  LATCHKEY_REFRESH_MARGIN_SECONDS: z.coerce.number().min(0).default(300),
  LATCHKEY_REFRESH_MARGIN_RATIO: z.coerce.number().min(0).max(0.9).default(0.25),
  LATCHKEY_REFRESH_FLOOR_SECONDS: z.coerce.number().min(0).default(60),
  LATCHKEY_LEADER_ELECTION: z.stringbool().default(true),
  LATCHKEY_LEASE_NAME: z.string().default('latchkey-controller'),
  LATCHKEY_LEASE_NAMESPACE: z.string().optional(),
  POD_NAMESPACE: z.string().optional(),
  POD_NAME: z.string().optional(),
  LATCHKEY_LEASE_DURATION_SECONDS: z.coerce.number().int().min(2).default(15),
  LATCHKEY_SESSION_TTL_SECONDS: z.coerce.number().int().min(60).max(86400).default(1800),
  LATCHKEY_WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(0).default(0),
  LATCHKEY_WEBHOOK_RETRY_HOURS: z.coerce.number().min(0).max(720).default(24),
  LATCHKEY_WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  LATCHKEY_WEBHOOK_NAMESPACE_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(2),
  LATCHKEY_WEBHOOK_BACKOFF_BASE_SECONDS: z.coerce.number().min(0).default(2),
  LATCHKEY_WEBHOOK_BACKOFF_MAX_SECONDS: z.coerce.number().min(0).default(3600),
  LATCHKEY_KUBECONFIG: z.string().optional(),
  LATCHKEY_EGRESS_ALLOW: z.string().default(''),
  LATCHKEY_CONNECT_MAX_CONNECTIONS_PER_SESSION: z.coerce.number().int().min(0).default(5),
  LATCHKEY_CONNECTION_CACHE_ENTRIES: z.coerce.number().int().min(0).default(0),
  LATCHKEY_CONNECT_API_RATE_PER_SESSION: z.coerce.number().min(0).default(60),
  LATCHKEY_AUTH_FAILURES_BURST: z.coerce.number().int().min(1).default(20),
  LATCHKEY_AUTH_FAILURES_PER_MINUTE: z.coerce.number().min(0).default(20),
  LATCHKEY_CONNECT_API_RATE_PER_NAMESPACE: z.coerce.number().min(0).default(1200),
  LATCHKEY_PROVIDER_WEBHOOK_RATE_PER_INTEGRATION: z.coerce.number().min(0).default(6000),
  LATCHKEY_SESSION_CREATE_RATE_PER_NAMESPACE: z.coerce.number().min(0).default(300),
  LATCHKEY_OPLOG_KEEP_ENTRIES: z.coerce.number().int().min(1).default(50),
  LATCHKEY_OPLOG_KEEP_DAYS: z.coerce.number().min(0).default(7),
  LATCHKEY_OPLOG_MAX_ENTRIES: z.coerce.number().int().min(1).default(200),
  LATCHKEY_OPLOG_ENVIRONMENT_ENTRIES: z.coerce.number().int().min(1).default(500),
  LATCHKEY_OPLOG_QUEUE_SIZE: z.coerce.number().int().min(1).default(10000),
  LATCHKEY_LAST_FETCHED_INTERVAL_SECONDS: z.coerce.number().min(1).default(300),
  LATCHKEY_RESYNC_SECONDS: z.coerce.number().min(10).default(1800),
  LATCHKEY_REFRESH_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  LATCHKEY_SHUTDOWN_DELAY_SECONDS: z.coerce.number().min(0).max(60).default(0),
  LATCHKEY_SERVICE_ACCOUNT_AUDIENCE: z.string().min(1).default('latchkey'),
  LATCHKEY_TOKEN_REVIEW_TTL_SECONDS: z.coerce.number().min(0).max(600).default(60),
  LATCHKEY_ACCESS_REVIEW_TTL_SECONDS: z.coerce.number().min(0).max(300).default(10),
  LATCHKEY_REVIEW_CACHE_ENTRIES: z.coerce.number().int().min(0).default(10000),
  LATCHKEY_PROVIDER_ANSWER_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  LATCHKEY_PROXY_IDLE_SECONDS: z.coerce.number().min(1).default(300),
  LATCHKEY_PROXY_STREAM_MAX_SECONDS: z.coerce.number().min(0).default(0),
});

export interface Config {
  logLevel: string;
  httpPort: number;
  controllerPort: number;
  publicBaseUrl: string;
  /** Empty means every namespace. */
  watchNamespaces: string[];
  /** Whether the controller syncs CredentialBindings (docs/credential-bindings.md). */
  credentialBindings: boolean;
  /** Namespaces whose CredentialBindings the controller watches; empty means every namespace. */
  bindingNamespaces: string[];
  refreshMarginSeconds: number;
  refreshMarginRatio: number;
  /** A token living shorter than this is refreshed at most once per this many seconds per connection (0: off). */
  refreshFloorSeconds: number;
  leaderElection: boolean;
  leaseName: string;
  leaseNamespace: string;
  identity: string;
  leaseDurationSeconds: number;
  sessionTtlSeconds: number;
  /** Attempts before a delivery is given up; 0: no count limit (the retry window decides). */
  webhookMaxAttempts: number;
  /** How long a delivery is retried after it was queued. */
  webhookRetryWindowSeconds: number;
  /** Deliveries in flight at once in this replica… */
  webhookConcurrency: number;
  /** …and at most this many of them for one namespace, so a slow receiver delays only its own tenant. */
  webhookNamespaceConcurrency: number;
  webhookBackoffBaseSeconds: number;
  webhookBackoffMaxSeconds: number;
  kubeconfig?: string;
  /**
   * CIDRs, addresses and host names outbound calls may reach although they are not public
   * (loopback, private, link-local...); empty: public addresses only. See docs/security.md.
   */
  egressAllow: string[];
  /** Connections one Connect session token may create (0: no cap). */
  connectMaxConnectionsPerSession: number;
  /**
   * A server without a controller in its process keeps at most this many connections in memory, read
   * from the API server on a miss (0: every connection, listed and watched).
   */
  connectionCacheEntries: number;
  /** Requests a minute to /connect/api/* per session and per namespace, and session creations a minute per namespace (0: off). */
  connectApiRatePerSession: number;
  connectApiRatePerNamespace: number;
  /** Provider webhooks accepted per minute per Integration (0: no limit); src/webhooks/provider-events.ts. */
  providerWebhookRatePerIntegration: number;
  sessionCreateRatePerNamespace: number;
  /** Failed secret-key checks one source address may make in a row, then how many a minute it regains (src/http/failed-auth-throttle.ts). */
  authFailuresBurst: number;
  authFailuresPerMinute: number;
  /** Operation log retention: per connection the newest N or those younger than the days, at most max. */
  oplogKeepEntries: number;
  oplogKeepDays: number;
  oplogMaxEntries: number;
  /** Entries in each environment's ring (attempts without a connection). */
  oplogEnvironmentEntries: number;
  /** Entries waiting to be stored at most (beyond it the oldest are dropped and counted). */
  oplogQueueSize: number;
  /** `last_fetched_at` is written at most once per connection per this many seconds, in batches off the request path. */
  lastFetchedIntervalSeconds: number;
  /** The controller reconciles everything it owns again at this interval (missed events; a time-based condition has its own revisit). */
  resyncSeconds: number;
  /** Token calls a controller replica makes at a time (its refresh rate is about this / the provider's answer time). */
  refreshConcurrency: number;
  /**
   * A stopping server keeps serving this long first, closing each kept-alive connection after its
   * next answer, while the Service drops the pod (the chart sets 5; 0: it stops taking requests at once).
   */
  shutdownDelaySeconds: number;
  /** The most bytes read of any answer from a provider or receiver; beyond it the call fails with `provider_answer_too_large`. */
  providerAnswerMaxBytes: number;
  /**
   * A proxied answer whose provider sends nothing for this long (while the caller reads) is ended:
   * an event stream cleanly, any other body cut (docs/proxy.md, "Streams").
   */
  proxyIdleSeconds: number;
  /** A proxied answer still streaming after this long is ended the same way (0: no limit). */
  proxyStreamMaxSeconds: number;
  /** The audience a workload's Kubernetes token must be issued for (docs/workloads.md). */
  serviceAccountAudience: string;
  /** A TokenReview is kept at most this long (and never past the token's expiry); a SubjectAccessReview this long. */
  tokenReviewTtlSeconds: number;
  accessReviewTtlSeconds: number;
  /** Entries in each of the two review caches, at most. */
  reviewCacheEntries: number;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return {
    logLevel: e.LATCHKEY_LOG_LEVEL,
    httpPort: e.LATCHKEY_HTTP_PORT,
    controllerPort: e.LATCHKEY_CONTROLLER_PORT,
    publicBaseUrl: (e.LATCHKEY_PUBLIC_BASE_URL ?? `http://localhost:${e.LATCHKEY_HTTP_PORT}`).replace(/\/+$/, ''),
    watchNamespaces: e.LATCHKEY_WATCH_NAMESPACES.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    credentialBindings: e.LATCHKEY_CREDENTIAL_BINDINGS,
    bindingNamespaces: e.LATCHKEY_BINDING_NAMESPACES.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    refreshMarginSeconds: e.LATCHKEY_REFRESH_MARGIN_SECONDS,
    refreshMarginRatio: e.LATCHKEY_REFRESH_MARGIN_RATIO,
    refreshFloorSeconds: e.LATCHKEY_REFRESH_FLOOR_SECONDS,
    leaderElection: e.LATCHKEY_LEADER_ELECTION,
    leaseName: e.LATCHKEY_LEASE_NAME,
    leaseNamespace: e.LATCHKEY_LEASE_NAMESPACE ?? e.POD_NAMESPACE ?? 'default',
    identity: e.POD_NAME ?? `latchkey-${process.pid}`,
    leaseDurationSeconds: e.LATCHKEY_LEASE_DURATION_SECONDS,
    sessionTtlSeconds: e.LATCHKEY_SESSION_TTL_SECONDS,
    webhookMaxAttempts: e.LATCHKEY_WEBHOOK_MAX_ATTEMPTS,
    webhookRetryWindowSeconds: Math.round(e.LATCHKEY_WEBHOOK_RETRY_HOURS * 3600),
    webhookConcurrency: e.LATCHKEY_WEBHOOK_CONCURRENCY,
    webhookNamespaceConcurrency: Math.min(e.LATCHKEY_WEBHOOK_NAMESPACE_CONCURRENCY, e.LATCHKEY_WEBHOOK_CONCURRENCY),
    webhookBackoffBaseSeconds: e.LATCHKEY_WEBHOOK_BACKOFF_BASE_SECONDS,
    webhookBackoffMaxSeconds: e.LATCHKEY_WEBHOOK_BACKOFF_MAX_SECONDS,
    kubeconfig: e.LATCHKEY_KUBECONFIG,
    egressAllow: parseEgressAllow(e.LATCHKEY_EGRESS_ALLOW),
    connectMaxConnectionsPerSession: e.LATCHKEY_CONNECT_MAX_CONNECTIONS_PER_SESSION,
    connectionCacheEntries: e.LATCHKEY_CONNECTION_CACHE_ENTRIES,
    connectApiRatePerSession: e.LATCHKEY_CONNECT_API_RATE_PER_SESSION,
    authFailuresBurst: e.LATCHKEY_AUTH_FAILURES_BURST,
    authFailuresPerMinute: e.LATCHKEY_AUTH_FAILURES_PER_MINUTE,
    connectApiRatePerNamespace: e.LATCHKEY_CONNECT_API_RATE_PER_NAMESPACE,
    providerWebhookRatePerIntegration: e.LATCHKEY_PROVIDER_WEBHOOK_RATE_PER_INTEGRATION,
    sessionCreateRatePerNamespace: e.LATCHKEY_SESSION_CREATE_RATE_PER_NAMESPACE,
    oplogKeepEntries: e.LATCHKEY_OPLOG_KEEP_ENTRIES,
    oplogKeepDays: e.LATCHKEY_OPLOG_KEEP_DAYS,
    oplogMaxEntries: Math.max(e.LATCHKEY_OPLOG_MAX_ENTRIES, e.LATCHKEY_OPLOG_KEEP_ENTRIES),
    oplogEnvironmentEntries: e.LATCHKEY_OPLOG_ENVIRONMENT_ENTRIES,
    oplogQueueSize: e.LATCHKEY_OPLOG_QUEUE_SIZE,
    lastFetchedIntervalSeconds: e.LATCHKEY_LAST_FETCHED_INTERVAL_SECONDS,
    resyncSeconds: e.LATCHKEY_RESYNC_SECONDS,
    refreshConcurrency: e.LATCHKEY_REFRESH_CONCURRENCY,
    shutdownDelaySeconds: e.LATCHKEY_SHUTDOWN_DELAY_SECONDS,
    providerAnswerMaxBytes: e.LATCHKEY_PROVIDER_ANSWER_MAX_BYTES,
    proxyIdleSeconds: e.LATCHKEY_PROXY_IDLE_SECONDS,
    proxyStreamMaxSeconds: e.LATCHKEY_PROXY_STREAM_MAX_SECONDS,
    serviceAccountAudience: e.LATCHKEY_SERVICE_ACCOUNT_AUDIENCE,
    tokenReviewTtlSeconds: e.LATCHKEY_TOKEN_REVIEW_TTL_SECONDS,
    accessReviewTtlSeconds: e.LATCHKEY_ACCESS_REVIEW_TTL_SECONDS,
    reviewCacheEntries: e.LATCHKEY_REVIEW_CACHE_ENTRIES,
  };
}

/** Comma- or space-separated entries, each checked now so a typo fails at start-up, not at the first call. */
function parseEgressAllow(value: string): string[] {
  const entries = value
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  try {
    new EgressAllowlist(entries);
  } catch (err) {
    throw new Error(`invalid configuration:\n  LATCHKEY_EGRESS_ALLOW: ${(err as Error).message}`);
  }
  return entries;
}
