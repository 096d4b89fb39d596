import { Counter, Histogram, metric, type Registry } from '../platform/metrics.js';

/** Proxied requests by provider and the status returned to the caller. */
export const proxyRequests = (registry: Registry) =>
  metric(
    registry,
    'latchkey_proxy_requests_total',
    (registers) =>
      new Counter({
        name: 'latchkey_proxy_requests_total',
        help: 'Requests through the credential-injecting proxy, by provider and status returned to the caller.',
        labelNames: ['provider', 'status'] as const,
        registers,
      }),
  );

/** Time from receiving a proxied request to the end of its response (including retries). */
export const proxyDuration = (registry: Registry) =>
  metric(
    registry,
    'latchkey_proxy_request_duration_seconds',
    (registers) =>
      new Histogram({
        name: 'latchkey_proxy_request_duration_seconds',
        help: 'Duration of proxied requests until the response is complete, by provider.',
        labelNames: ['provider'] as const,
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
        registers,
      }),
  );

/** Retries the proxy made, by provider and reason (status code or network_error, unauthorized_refresh). */
export const proxyRetries = (registry: Registry) =>
  metric(
    registry,
    'latchkey_proxy_retries_total',
    (registers) =>
      new Counter({
        name: 'latchkey_proxy_retries_total',
        help: 'Retries of proxied requests, by provider and reason.',
        labelNames: ['provider', 'reason'] as const,
        registers,
      }),
  );

/** Proxied answers the proxy ended itself, by provider and limit (`idle`, `max_duration`). */
export const proxyStreamsEnded = (registry: Registry) =>
  metric(
    registry,
    'latchkey_proxy_streams_ended_total',
    (registers) =>
      new Counter({
        name: 'latchkey_proxy_streams_ended_total',
        help: 'Proxied answers ended by the proxy at a stream limit, by provider and limit (idle, max_duration).',
        labelNames: ['provider', 'limit'] as const,
        registers,
      }),
  );
