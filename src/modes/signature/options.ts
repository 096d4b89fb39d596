/** SIGNATURE's options (`spec.signature`): the per-request signature (WSSE), how long one is accepted, its header. */
import { z } from 'zod';
import type { ModeOptions } from '../auth-mode.js';
import { definedOnly } from '../shared/options-view.js';

export const SignatureOptions = z.object({
  protocol: z.literal('WSSE'),
  lifetimeSeconds: z.number().int().min(1).max(3600).optional(),
  header: z
    .string()
    .max(128)
    .regex(/^[A-Za-z0-9-]+$/)
    .optional(),
});

export const signatureOptions: ModeOptions = {
  field: 'signature',
  schema: SignatureOptions,
  shownAs: 'signature',
  view: (b) => definedOnly({ protocol: b.protocol, lifetime_seconds: b.lifetimeSeconds, header: b.header }),
  viewSchema: z
    .object({ protocol: z.string(), lifetime_seconds: z.number().int().optional(), header: z.string().optional() })
    .optional()
    .describe('SIGNATURE'),
};
