import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from 'prom-client';

/** A registry with the process's default metrics. One per process (tests make their own). */
export function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'latchkey_process_' });
  return registry;
}

/**
 * Returns the metric of that name in the registry, creating it once. Modules call this with their
 * own definition so that any number of components can share one registry without double registration.
 * Label values must be bounded (provider, route, reason...) and never carry a secret or an ID.
 */
export function metric<T extends Metric<string>>(registry: Registry, name: string, create: (registers: Registry[]) => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create([registry]);
}

export const httpRequestDuration = (registry: Registry) =>
  metric(
    registry,
    'latchkey_http_request_duration_seconds',
    (registers) =>
      new Histogram({
        name: 'latchkey_http_request_duration_seconds',
        help: 'Duration of HTTP requests served, by route pattern, method and status code.',
        labelNames: ['route', 'method', 'status'] as const,
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers,
      }),
  );

export const heapCompactionSeconds = (registry: Registry) =>
  metric(
    registry,
    'latchkey_heap_compaction_seconds',
    (registers) =>
      new Histogram({
        name: 'latchkey_heap_compaction_seconds',
        help: 'Pauses of the compacting collections run after start-up work, by reason (caches synced, reconcile wave done, idle after growth).',
        labelNames: ['reason'] as const,
        buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
        registers,
      }),
  );

export { Counter, Gauge, Histogram, Registry };
