/**
 * CRD versions keep their promises: a field of a served version that crds/compatibility.json records is never
 * removed, retyped, made required or narrowed, and a served version is never dropped (docs/operations.md,
 * "CRD versions"). New fields are fine: `npm run crds:baseline` records them.
 */
import { readFileSync } from 'node:fs';
import { BASELINE_PATH, brokenPromises, crdFields, type CrdFields } from '../../dev/crd-fields.js';

const baseline = JSON.parse(readFileSync(BASELINE_PATH, 'utf8')) as CrdFields;

describe('CRD compatibility', () => {
  it('every served version keeps every field the baseline records', () => {
    expect(brokenPromises(baseline, crdFields())).toEqual([]);
  });

  it('records every CRD the project ships', () => {
    expect(Object.keys(crdFields()).filter((crd) => !baseline[crd])).toEqual([]);
  });

  it('finds a removed field, a changed type, a new requirement, a narrowed enum and a dropped version', () => {
    const before: CrdFields = {
      'things.latchkey.dev': {
        v1alpha1: {
          spec: { type: 'object', required: true },
          'spec.a': { type: 'string' },
          'spec.b': { type: 'integer' },
          'spec.c': { type: 'string' },
          'spec.d': { type: 'string', enum: ['x', 'y'] },
        },
        v1beta1: { spec: { type: 'object' } },
      },
    };
    const after: CrdFields = {
      'things.latchkey.dev': {
        v1alpha1: {
          spec: { type: 'object', required: true },
          'spec.b': { type: 'string' },
          'spec.c': { type: 'string', required: true },
          'spec.d': { type: 'string', enum: ['x'] },
          'spec.e': { type: 'string', required: true },
          'spec.f': { type: 'string' },
        },
      },
    };
    expect(brokenPromises(before, after).sort()).toEqual(
      [
        'things.latchkey.dev v1alpha1 spec.a: removed',
        'things.latchkey.dev v1alpha1 spec.b: type integer became string',
        'things.latchkey.dev v1alpha1 spec.c: became required',
        'things.latchkey.dev v1alpha1 spec.d: enum narrowed',
        'things.latchkey.dev v1alpha1 spec.e: new and required',
        'things.latchkey.dev v1beta1: no longer served',
      ].sort(),
    );
  });
});
