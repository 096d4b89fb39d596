/** API_KEY: a key the Provider's templates place (`${apiKey}` in `proxy.headers`, `proxy.query` or `proxy.body`); never renewed. */
import { z } from 'zod';
import type { AuthModeModule } from '../auth-mode.js';
import { flatFields } from '../shared/flat-fields.js';
import { noAuthorization, templatesUse } from '../shared/injection.js';
import type { ProxyInjection } from '../auth-mode.js';
import { checkedFormCredentials } from '../shared/typed-check.js';

const injection: ProxyInjection = {
  accessTokenField: 'access_token',
  refreshesOnUse: false,
  signsFormBody: false,
  authorization: noAuthorization,
};

export const apiKey: AuthModeModule = {
  mode: 'API_KEY',
  credentialSchemas: {
    import: z.strictObject({ type: z.literal('API_KEY'), apiKey: z.string().min(1) }),
    shown: z.object({ type: z.literal('API_KEY'), apiKey: z.string() }),
  },
  fromImport: (_deps, { given }) => Promise.resolve({ credentials: { ...given } }),
  fromFlatImport(_deps, input) {
    const body = flatFields(input, ['api_key'], ['api_key']);
    return Promise.resolve({ type: 'API_KEY', apiKey: body.api_key! });
  },
  connect: {
    flow: 'form',
    fields: () => [{ name: 'apiKey', secret: true, required: true }],
    // Checked with the provider's verification call, when it declares one.
    credentials: (deps, form) => checkedFormCredentials(deps, form, { type: 'API_KEY', apiKey: form.values.apiKey! }, injection, 'API key'),
  },
  proxy: injection,
  providerProblems(spec) {
    return templatesUse(spec, '${apiKey}')
      ? []
      : [
          'API_KEY providers must say where the key goes: a spec.proxy.headers, spec.proxy.query or spec.proxy.body value containing ${apiKey}',
        ];
  },
  integration: { clientBeforeConnect: false, accepts: [], needsNoClient: true },
};
