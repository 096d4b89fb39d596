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

/** The first problem with the shape of a request part, or undefined. */
export function inputShapeProblem(value: unknown, where: InputPart): ErrorDetail | undefined {
  // Iterative, so a hostile depth cannot overflow this check either.
  const stack: Array<{ value: unknown; path: string[] }> = [{ value, path: [where] }];
  while (stack.length) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (!v.isWellFormed()) return { path: path.join('.'), message: 'contains a lone UTF-16 surrogate', code: 'malformed_string' };
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (path.length > MAX_INPUT_DEPTH) {
      return { path: path.join('.'), message: `nested deeper than ${MAX_INPUT_DEPTH} levels`, code: 'too_deep' };
    }
    for (const [k, child] of Object.entries(v)) {
      if (!k.isWellFormed()) return { path: path.join('.'), message: 'a key contains a lone UTF-16 surrogate', code: 'malformed_string' };
      // Keys are echoed in messages: a hostile 1 MB key is shortened.
      stack.push({ value: child, path: [...path, k.length > 64 ? `${k.slice(0, 61)}...` : k] });
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
