/**
 * JWT's options: the Provider's generic `modeOptions` (the algorithm, the key's encoding, the token's
 * lifetime, header and claims), checked by the minter's schema; GET /providers shows them as declared.
 */
import { z } from 'zod';
import type { ModeOptions } from '../auth-mode.js';
import { JwtModeOptions } from '../shared/jwt-minting.js';

export const jwtOptions: ModeOptions = {
  field: 'modeOptions',
  schema: JwtModeOptions,
  shownAs: 'mode_options',
  view: (block) => block,
  viewSchema: z.record(z.string(), z.unknown()).optional(),
};
