/**
 * INSTALL_PLUGIN: the end user installs the provider's plugin, whose signed callback carries the
 * credential it issued (src/modes/install-plugin/plugin-install-flow.ts); imported as an API key is, placed by the
 * Provider's templates, never renewed. The Integration's client secret verifies the callbacks.
 */
import { z } from 'zod';
import type { AuthModeModule } from '../auth-mode.js';
import { flatFields } from '../shared/flat-fields.js';
import { noAuthorization } from '../shared/injection.js';
import { pluginInstallFlow } from './plugin-install-flow.js';
import { pluginInstallOptions } from './options.js';
import { rawAnswer } from '../shared/credential-schemas.js';

export const installPlugin: AuthModeModule = {
  mode: 'INSTALL_PLUGIN',
  credentialSchemas: {
    // The credential a plugin installation issued (what its install callback carries).
    import: z.strictObject({ type: z.literal('INSTALL_PLUGIN'), apiKey: z.string().min(1).max(4096) }),
    shown: z.object({
      type: z.literal('INSTALL_PLUGIN'),
      apiKey: z.string().describe('The credential the plugin installation issued'),
      raw: rawAnswer.optional(),
    }),
  },
  fromImport: (_deps, { given }) => Promise.resolve({ credentials: { ...given } }),
  fromFlatImport(_deps, input) {
    const body = flatFields(input, ['api_key'], ['api_key']);
    return Promise.resolve({ type: 'INSTALL_PLUGIN', apiKey: body.api_key! });
  },
  connect: { flow: 'redirect', ...pluginInstallFlow },
  proxy: { accessTokenField: 'access_token', refreshesOnUse: false, signsFormBody: false, authorization: noAuthorization },
  providerProblems: (spec) =>
    !spec.pluginInstall?.installUrl || !spec.pluginInstall.credentialParam
      ? ['INSTALL_PLUGIN providers need spec.pluginInstall.installUrl and spec.pluginInstall.credentialParam']
      : [],
  // The client secret is the key the provider signs its install callbacks with.
  integration: { clientBeforeConnect: false, accepts: ['OAUTH2'] },
  options: pluginInstallOptions,
};
