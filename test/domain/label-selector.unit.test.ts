import { selectsLabels } from '../../src/domain/label-selector.js';

describe('selectsLabels (metav1.LabelSelector as the API server matches it)', () => {
  const labels = { team: 'billing', tier: 'prod' };
  it.each([
    ['an empty selector selects everything', {}, labels, true],
    ['an empty selector selects a namespace without labels', {}, undefined, true],
    ['matchLabels: equal', { matchLabels: { team: 'billing' } }, labels, true],
    ['matchLabels: different value', { matchLabels: { team: 'search' } }, labels, false],
    ['matchLabels: missing key', { matchLabels: { owner: 'x' } }, labels, false],
    ['In', { matchExpressions: [{ key: 'tier', operator: 'In' as const, values: ['prod', 'staging'] }] }, labels, true],
    ['In: key absent', { matchExpressions: [{ key: 'zone', operator: 'In' as const, values: ['a'] }] }, labels, false],
    ['NotIn: key absent selects', { matchExpressions: [{ key: 'zone', operator: 'NotIn' as const, values: ['a'] }] }, labels, true],
    ['NotIn: listed value', { matchExpressions: [{ key: 'tier', operator: 'NotIn' as const, values: ['prod'] }] }, labels, false],
    ['Exists', { matchExpressions: [{ key: 'team', operator: 'Exists' as const }] }, labels, true],
    ['DoesNotExist', { matchExpressions: [{ key: 'team', operator: 'DoesNotExist' as const }] }, labels, false],
    [
      'every requirement must hold',
      { matchLabels: { team: 'billing' }, matchExpressions: [{ key: 'tier', operator: 'In' as const, values: ['dev'] }] },
      labels,
      false,
    ],
    ['an unknown operator selects nothing', { matchExpressions: [{ key: 'team', operator: 'Gt' as never }] }, labels, false],
    [
      'a key inherited from Object.prototype is not a label',
      { matchExpressions: [{ key: 'toString', operator: 'Exists' as const }] },
      {},
      false,
    ],
  ])('%s', (_name, selector, given, expected) => {
    expect(selectsLabels(selector, given)).toBe(expected);
  });
});
