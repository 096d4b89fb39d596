/**
 * The options of APP and CUSTOM (`spec.appInstallation`), one block for both: the code host's endpoints
 * besides the install page (`authorizationUrl`) and the installation token URL (`tokenUrl`).
 */
import { z } from 'zod';
import type { ModeOptions } from '../auth-mode.js';
import { definedOnly } from './options-view.js';

export const AppInstallationOptions = z.object({
  installationUrl: z.string().max(2048).optional(),
  userTokenUrl: z.string().max(2048).optional(),
  userInstallationsUrl: z.string().max(2048).optional(),
});

export const appInstallationOptions: ModeOptions = {
  field: 'appInstallation',
  schema: AppInstallationOptions,
  shownAs: 'app_installation',
  view: (b) =>
    definedOnly({ installation_url: b.installationUrl, user_token_url: b.userTokenUrl, user_installations_url: b.userInstallationsUrl }),
  viewSchema: z
    .object({
      installation_url: z.string().optional(),
      user_token_url: z.string().optional(),
      user_installations_url: z.string().optional(),
    })
    .optional()
    .describe('APP and CUSTOM: endpoints besides the install page (authorization_url) and the installation token URL (token_url)'),
};
