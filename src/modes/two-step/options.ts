/**
 * TWO_STEP's options (`spec.twoStep`): the exchange's schema is the exchange's own (./two-step.ts).
 * GET /providers shows what a client needs, the fields to collect and where the exchange goes; the
 * request's `headers` and `body` templates are left out: they may carry fixed values the provider's
 * token endpoint wants (an application key), and only Latchkey makes the exchange.
 */
import { z } from 'zod';
import type { ModeOptions } from '../auth-mode.js';
import { definedOnly } from '../shared/options-view.js';
import { TwoStepOptions } from './two-step.js';

/** `spec.twoStep` is free-form for the CRD's sake: only values of the documented types are shown. */
function twoStepView(t: Record<string, unknown>): Record<string, unknown> {
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const fields = Array.isArray(t.credentialFields) ? (t.credentialFields as unknown[]) : [];
  return definedOnly({
    token_url: str(t.tokenUrl),
    content_type: str(t.contentType) ?? 'json',
    credential_fields: fields.flatMap((f) => {
      const field = (f ?? {}) as Record<string, unknown>;
      const name = str(field.name);
      // Defaults as the CRD documents them: secret and required unless said otherwise.
      return name
        ? [definedOnly({ name, label: str(field.label), secret: field.secret !== false, required: field.required !== false })]
        : [];
    }),
    token_path: str(t.tokenPath),
    expires_in_path: str(t.expiresInPath),
    expires_at_path: str(t.expiresAtPath),
    default_lifetime_seconds: typeof t.defaultLifetimeSeconds === 'number' ? t.defaultLifetimeSeconds : undefined,
  });
}

export const twoStepProviderOptions: ModeOptions = {
  field: 'twoStep',
  schema: TwoStepOptions,
  shownAs: 'two_step',
  view: twoStepView,
  viewSchema: z
    .object({
      token_url: z.string().optional(),
      content_type: z.string().optional(),
      credential_fields: z.array(z.object({ name: z.string(), label: z.string().optional(), secret: z.boolean(), required: z.boolean() })),
      token_path: z.string().optional(),
      expires_in_path: z.string().optional(),
      expires_at_path: z.string().optional(),
      default_lifetime_seconds: z.number().int().optional(),
    })
    .optional()
    .describe('TWO_STEP: the fields the end user gives and where they are exchanged (the request templates are not shown)'),
};
