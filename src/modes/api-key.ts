/** API_KEY: a key the Provider's templates place (`${apiKey}` in `proxy.headers` or `proxy.query`); never renewed. */
import type { AuthModeModule } from './auth-mode.js';
import { flatFields } from './flat-fields.js';
import { noAuthorization } from './injection.js';

export const apiKey: AuthModeModule = {
  mode: 'API_KEY',
  fromImport: (_deps, { given }) => Promise.resolve({ credentials: { ...given } }),
  fromFlatImport(_deps, input) {
    const body = flatFields(input, ['api_key'], ['api_key']);
    return Promise.resolve({ type: 'API_KEY', apiKey: body.api_key! });
  },
  connect: {
    flow: 'form',
    fields: () => [{ name: 'apiKey', secret: true, required: true }],
    credentials: (_deps, form) => Promise.resolve({ credentials: { type: 'API_KEY', apiKey: form.values.apiKey! } }),
  },
  proxy: { accessTokenField: 'access_token', refreshesOnUse: false, signsFormBody: false, authorization: noAuthorization },
  providerProblems(spec) {
    const places = [...Object.values(spec.proxy?.headers ?? {}), ...Object.values(spec.proxy?.query ?? {})];
    return places.some((v) => v.includes('${apiKey}'))
      ? []
      : ['API_KEY providers must say where the key goes: a spec.proxy.headers or spec.proxy.query value containing ${apiKey}'];
  },
  integration: { clientBeforeConnect: false, accepts: [], needsNoClient: true },
};
