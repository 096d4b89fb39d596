/**
 * BASIC's options (`spec.basic`): a credential field whose value the provider's docs fix (lemlist: the
 * user name is always empty; Chargify: the password is always "x"). The Connect form does not ask for
 * it, an import may leave it out or send that same value (a different one is a 400: a value there is a
 * mistake, most often the key in the wrong field), and the proxy sends the fixed value.
 */
import { z } from 'zod';
import { LatchkeyError } from '../../domain/errors.js';
import type { ProviderSpec } from '../../k8s/resources.js';
import type { ModeOptions } from '../auth-mode.js';
import { definedOnly } from '../shared/options-view.js';

export const BASIC_FIELDS = ['username', 'password'] as const;
export type BasicField = (typeof BASIC_FIELDS)[number];

const FixedValue = z.string().max(256);
export const BasicOptions = z.object({
  fixed: z
    .object({ username: FixedValue.optional(), password: FixedValue.optional() })
    .strict()
    .refine((f) => Object.keys(f).length === 1, 'fix one field: the other is what the end user types'),
});

export const basicOptions: ModeOptions = {
  field: 'basic',
  schema: BasicOptions,
  shownAs: 'basic',
  view: (b) => definedOnly({ fixed: b.fixed }),
  viewSchema: z
    .object({ fixed: z.object({ username: z.string().optional(), password: z.string().optional() }).optional() })
    .optional()
    .describe('BASIC'),
};

/** The fields the Provider fixes, with their values (none when the block is absent or unusable). */
export function fixedFields(spec: ProviderSpec): Partial<Record<BasicField, string>> {
  const parsed = BasicOptions.safeParse(spec.basic);
  return parsed.success ? parsed.data.fixed : {};
}

/**
 * A username and password as given (an import body, a form) with the Provider's fixed value in place:
 * a fixed field may be absent or carry that value; a field not fixed must be there.
 */
export function withFixedFields(
  spec: ProviderSpec,
  provider: string,
  given: Partial<Record<BasicField, string>>,
  path: (field: BasicField) => string,
): Record<BasicField, string> {
  const fixed = fixedFields(spec);
  const out = {} as Record<BasicField, string>;
  for (const field of BASIC_FIELDS) {
    const value = given[field];
    const fixedValue = fixed[field];
    if (fixedValue !== undefined) {
      if (value !== undefined && value !== fixedValue) {
        throw new LatchkeyError(
          'invalid_input',
          'fixed_by_provider',
          `Provider "${provider}" fixes the ${field} (its docs say what it is); leave ${field} out`,
          { errors: [{ path: path(field), message: 'fixed by the provider: leave it out', code: 'fixed_by_provider' }] },
        );
      }
      out[field] = fixedValue;
    } else if (value === undefined) {
      throw new LatchkeyError('invalid_input', 'missing_credentials', `Provider "${provider}" uses BASIC: ${field} required`, {
        errors: [{ path: path(field), message: 'required', code: 'missing_credentials' }],
      });
    } else out[field] = value;
  }
  return out;
}
