/** NONE: nothing to authorize (configuration fields only, or none at all); the proxy adds only the templates. */
import { z } from 'zod';
import type { AuthModeModule } from '../auth-mode.js';
import { flatFields } from '../shared/flat-fields.js';
import { noAuthorization } from '../shared/injection.js';

export const none: AuthModeModule = {
  mode: 'NONE',
  credentialSchemas: {
    import: z.strictObject({ type: z.literal('NONE') }),
    shown: z.object({ type: z.literal('NONE') }),
  },
  fromImport: (_deps, { given }) => Promise.resolve({ credentials: { ...given } }),
  fromFlatImport(_deps, input) {
    flatFields(input, []);
    return Promise.resolve({ type: 'NONE' });
  },
  connect: { flow: 'form', fields: () => [], credentials: () => Promise.resolve({ credentials: { type: 'NONE' } }) },
  proxy: { accessTokenField: 'access_token', refreshesOnUse: false, signsFormBody: false, authorization: noAuthorization },
  providerProblems: () => [],
  integration: { clientBeforeConnect: false, accepts: [], needsNoClient: true },
};
