/**
 * Checks every request part must pass before its zod schema: no string (value or key) holding a lone
 * UTF-16 surrogate, and no nesting deeper than any real request. A lone surrogate cannot be written
 * to the API server as it was sent (it becomes U+FFFD, so the stored ID differs from the one the
 * caller holds), and deep nesting overflows the stack of whatever walks the value later.
 */
import { LatchkeyError, type ErrorDetail } from '../domain/errors.js';

export type InputPart = 'body' | 'query' | 'path' | 'headers';

/** Deeper than metadata, connection configuration or any request body needs. */
export const MAX_INPUT_DEPTH = 32;

/** Where a value sits: its key and its parent's place, so a path is joined only for a problem found. */
interface Place {
  key: string;
  parent: Place | undefined;
}

function pathOf(place: Place | undefined, where: InputPart): string {
  const keys: string[] = [];
  for (let p = place; p; p = p.parent) keys.push(p.key);
  keys.push(where);
  return keys.reverse().join('.');
}

/** Keys are echoed in messages: a hostile 1 MB key is shortened. */
const shortKey = (k: string) => (k.length > 64 ? `${k.slice(0, 61)}...` : k);

const malformed = (path: string): ErrorDetail => ({ path, message: 'contains a lone UTF-16 surrogate', code: 'malformed_string' });

/** The first problem with the shape of a request part, or undefined. */
export function inputShapeProblem(value: unknown, where: InputPart): ErrorDetail | undefined {
  if (typeof value === 'string') return value.isWellFormed() ? undefined : malformed(where);
  if (typeof value !== 'object' || value === null) return undefined;
  // Iterative, so a hostile depth cannot overflow this check either. Strings are checked where they
  // are found and nothing is built per value (this runs on every request, the proxy's included).
  const stack: Array<{ value: object; place: Place | undefined; depth: number }> = [{ value, place: undefined, depth: 1 }];
  while (stack.length) {
    const { value: v, place, depth } = stack.pop()!;
    if (depth > MAX_INPUT_DEPTH)
      return { path: pathOf(place, where), message: `nested deeper than ${MAX_INPUT_DEPTH} levels`, code: 'too_deep' };
    for (const k of Object.keys(v)) {
      if (!k.isWellFormed())
        return { path: pathOf(place, where), message: 'a key contains a lone UTF-16 surrogate', code: 'malformed_string' };
      const child = (v as Record<string, unknown>)[k];
      if (typeof child === 'string') {
        if (!child.isWellFormed()) return malformed(pathOf({ key: shortKey(k), parent: place }, where));
      } else if (typeof child === 'object' && child !== null) {
        stack.push({ value: child, place: { key: shortKey(k), parent: place }, depth: depth + 1 });
      }
    }
  }
  return undefined;
}

/** Throws the 400 for {@link inputShapeProblem}. */
export function assertInputShape(value: unknown, where: InputPart): void {
  const problem = inputShapeProblem(value, where);
  if (problem) {
    throw new LatchkeyError('invalid_input', `invalid_${where}`, `Invalid ${where}: ${problem.path}: ${problem.message}`, {
      errors: [problem],
    });
  }
}
