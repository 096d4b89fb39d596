/** The shape checks every request part passes before its zod schema (no cluster needed). */
import { inputShapeProblem, MAX_INPUT_DEPTH } from '../../src/http/input-shape.js';
import { nested } from '../support/hostile.js';

describe('inputShapeProblem', () => {
  it('accepts ordinary JSON, including astral characters as pairs', () => {
    expect(inputShapeProblem({ a: ['x', 1, null, { b: '😀' }] }, 'body')).toBeUndefined();
    expect(inputShapeProblem(nested(MAX_INPUT_DEPTH), 'body')).toBeUndefined();
  });

  it('refuses a lone surrogate in a value or a key, naming where', () => {
    expect(inputShapeProblem({ a: { b: 'x\ud800' } }, 'body')).toEqual(
      expect.objectContaining({ path: 'body.a.b', code: 'malformed_string' }),
    );
    expect(inputShapeProblem({ a: { '\udfff': 1 } }, 'query')).toEqual(
      expect.objectContaining({ path: 'query.a', code: 'malformed_string' }),
    );
  });

  it('refuses nesting deeper than the limit without recursing', () => {
    expect(inputShapeProblem(nested(MAX_INPUT_DEPTH + 2), 'body')?.code).toBe('too_deep');
    expect(inputShapeProblem(nested(200_000), 'body')?.code).toBe('too_deep');
  });
});
