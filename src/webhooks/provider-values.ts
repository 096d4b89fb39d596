/** Values a Provider's webhook data points at: a header, or a dotted path into the JSON body. */
import type { WebhookValueSource } from '../k8s/resources.js';

/**
 * The values at a dotted path (`installation.id`, `value.*.clientState`); `*` takes every element of
 * an array (or every value of an object). Only strings, numbers and booleans count, as strings are
 * what connection configuration holds.
 */
export function valuesAt(json: unknown, path: string): unknown[] {
  if (!path) return [];
  let level: unknown[] = [json];
  for (const key of path.split('.')) {
    const next: unknown[] = [];
    for (const v of level) {
      if (v === null || typeof v !== 'object') continue;
      // One push per element: spreading a sender's array of 200,000 into push() overflows the stack.
      if (key === '*') for (const element of Array.isArray(v) ? v : Object.values(v)) next.push(element);
      else if (Object.prototype.hasOwnProperty.call(v, key)) next.push((v as Record<string, unknown>)[key]);
    }
    level = next;
  }
  return level.filter((v) => v !== undefined && v !== null);
}

/** The distinct scalar values (as strings) a source names in a request. */
export function sourceValues(source: WebhookValueSource, headers: Record<string, string | undefined>, json: unknown): string[] {
  const found = source.header ? [headers[source.header]] : valuesAt(json, source.bodyPath ?? '');
  const scalars = found.filter((v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean').map(String);
  return [...new Set(scalars.filter((v) => v.length > 0 && v.length <= 512))];
}
