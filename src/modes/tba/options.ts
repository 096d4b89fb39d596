/** TBA's options (`spec.tba`): where the account ID (the realm) is, and how requests are signed. */
import { z } from 'zod';
import type { ModeOptions } from '../auth-mode.js';
import { definedOnly } from '../shared/options-view.js';

export const TbaOptions = z.object({
  accountIdKey: z
    .string()
    .max(64)
    .regex(/^[A-Za-z][A-Za-z0-9_]*$/)
    .optional(),
  signatureMethod: z.enum(['HMAC-SHA256', 'HMAC-SHA1']).optional(),
});

export const tbaOptions: ModeOptions = {
  field: 'tba',
  schema: TbaOptions,
  shownAs: 'tba',
  view: (b) => definedOnly({ account_id_key: b.accountIdKey, signature_method: b.signatureMethod }),
  viewSchema: z.object({ account_id_key: z.string().optional(), signature_method: z.string().optional() }).optional().describe('TBA'),
};
