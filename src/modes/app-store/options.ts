/** APP_STORE's options (`spec.appStore`): the minted token's lifetime (at most Apple's 20 minutes). */
import { z } from 'zod';
import type { ModeOptions } from '../auth-mode.js';
import { definedOnly } from '../shared/options-view.js';

export const AppStoreOptions = z.object({ lifetimeSeconds: z.number().int().min(60).max(1200).optional() });

export const appStoreOptions: ModeOptions = {
  field: 'appStore',
  schema: AppStoreOptions,
  shownAs: 'app_store',
  view: (b) => definedOnly({ lifetime_seconds: b.lifetimeSeconds }),
  viewSchema: z.object({ lifetime_seconds: z.number().int().optional() }).optional().describe('APP_STORE'),
};
