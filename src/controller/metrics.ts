import { Counter, Gauge, Histogram, metric, type Registry } from '../platform/metrics.js';

/**
 * The controller's Prometheus metrics. Labels are bounded: provider names (the catalog), a fixed set
 * of reasons, condition types and statuses, queue names. Never a connection ID, never a secret.
 */
export interface ControllerMetrics {
  refreshAttempts: Counter<'provider' | 'reason'>;
  refreshFailures: Counter<'provider' | 'reason'>;
  refreshDuration: Histogram<'provider'>;
  connections: Gauge<'condition' | 'status'>;
  workqueueDepth: Gauge<'queue'>;
  workqueueTerminal: Counter<'queue'>;
  leader: Gauge<string>;
}

export function controllerMetrics(registry: Registry): ControllerMetrics {
  return {
    refreshAttempts: metric(
      registry,
      'latchkey_refresh_attempts_total',
      (registers) =>
        new Counter({
          name: 'latchkey_refresh_attempts_total',
          help: 'Scheduled token refreshes attempted by the controller, by provider and trigger (schedule, retry).',
          labelNames: ['provider', 'reason'] as const,
          registers,
        }),
    ),
    refreshFailures: metric(
      registry,
      'latchkey_refresh_failures_total',
      (registers) =>
        new Counter({
          name: 'latchkey_refresh_failures_total',
          help: 'Failed token refreshes, by provider and failure class (e.g. invalid_grant, http_5xx, rate_limited, network).',
          labelNames: ['provider', 'reason'] as const,
          registers,
        }),
    ),
    refreshDuration: metric(
      registry,
      'latchkey_refresh_duration_seconds',
      (registers) =>
        new Histogram({
          name: 'latchkey_refresh_duration_seconds',
          help: 'Duration of token refreshes made by the controller, by provider.',
          labelNames: ['provider'] as const,
          buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
          registers,
        }),
    ),
    connections: metric(
      registry,
      'latchkey_connections',
      (registers) =>
        new Gauge({
          name: 'latchkey_connections',
          help: 'Connections by condition type and status (as last reconciled by the leader).',
          labelNames: ['condition', 'status'] as const,
          registers,
        }),
    ),
    workqueueDepth: metric(
      registry,
      'latchkey_workqueue_depth',
      (registers) =>
        new Gauge({
          name: 'latchkey_workqueue_depth',
          help: 'Keys waiting in a controller work queue.',
          labelNames: ['queue'] as const,
          registers,
        }),
    ),
    workqueueTerminal: metric(
      registry,
      'latchkey_workqueue_terminal_errors_total',
      (registers) =>
        new Counter({
          name: 'latchkey_workqueue_terminal_errors_total',
          help: 'Keys a controller work queue dropped because their handler failed in a way retrying cannot fix.',
          labelNames: ['queue'] as const,
          registers,
        }),
    ),
    leader: metric(
      registry,
      'latchkey_leader',
      (registers) =>
        new Gauge({
          name: 'latchkey_leader',
          help: '1 while this controller instance holds the leader lease, else 0.',
          registers,
        }),
    ),
  };
}

const OAUTH_ERRORS = new Set([
  'invalid_grant',
  'invalid_client',
  'unauthorized_client',
  'invalid_request',
  'invalid_scope',
  'unsupported_grant_type',
  'access_denied',
  'temporarily_unavailable',
  'server_error',
  'slow_down',
  // the shared refresher's own classes (RefreshErrorCode, src/auth/refresh/errors.ts)
  'integration_misconfigured',
  'refresh_in_progress',
]);

/** Maps an error code or HTTP status to a bounded label value. */
export function failureReason(code: unknown, status: unknown, permanent: boolean): string {
  if (typeof code === 'string' && OAUTH_ERRORS.has(code)) return code;
  if (typeof status === 'number') {
    if (status === 429) return 'rate_limited';
    if (status >= 500) return 'http_5xx';
    if (status >= 400) return 'http_4xx';
  }
  if (typeof code === 'string' && /^(ETIMEDOUT|ECONNRESET|ECONNREFUSED|UND_ERR_|ENOTFOUND|EAI_AGAIN|TimeoutError|AbortError)/.test(code))
    return 'network';
  return permanent ? 'permanent_other' : 'transient_other';
}
