/** INSTALL_PLUGIN's options (`spec.pluginInstall`): the install page and what its signed callback carries. */
import { z } from 'zod';
import type { ModeOptions } from '../auth-mode.js';
import { definedOnly } from '../shared/options-view.js';

const Param = z.string().min(1).max(64);

export const PluginInstallOptions = z.object({
  installUrl: z.string().min(1).max(2048),
  credentialParam: Param,
  configParams: z.array(Param).max(10).optional(),
  signatureParam: Param.optional(),
  timestampParam: Param.optional(),
  maxAgeSeconds: z.number().int().min(30).max(3600).optional(),
});

export const pluginInstallOptions: ModeOptions = {
  field: 'pluginInstall',
  schema: PluginInstallOptions,
  shownAs: 'plugin_install',
  view: (b) =>
    definedOnly({
      install_url: b.installUrl,
      credential_param: b.credentialParam,
      config_params: b.configParams,
      signature_param: b.signatureParam,
      timestamp_param: b.timestampParam,
      max_age_seconds: b.maxAgeSeconds,
    }),
  viewSchema: z
    .object({
      install_url: z.string(),
      credential_param: z.string(),
      config_params: z.array(z.string()).optional(),
      signature_param: z.string().optional(),
      timestamp_param: z.string().optional(),
      max_age_seconds: z.number().int().optional(),
    })
    .optional()
    .describe('INSTALL_PLUGIN: the install page and what its signed callback carries'),
};
