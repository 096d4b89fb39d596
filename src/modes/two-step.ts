/**
 * TWO_STEP: the fields the Provider declares (`twoStep.credentialFields`) exchanged at its token
 * endpoint for a token, at import, in the form and again before the token expires; sent as a bearer.
 */
import { checkTwoStepFields, exchangeTwoStep, twoStepOptions, twoStepStrategy, TwoStepOptions } from '../auth/two-step.js';
import type { ProviderResource, ProviderSpec } from '../k8s/resources.js';
import type { StoredCredentials } from '../k8s/store.js';
import type { AuthModeModule, CredentialField, GivenCredentials, ModeDeps } from './auth-mode.js';
import { exchangeNow, formOutcomeOf, importConfig } from './exchange.js';
import { flatFields } from './flat-fields.js';
import { bearerInjection } from './injection.js';

/** The fields the Provider declares; none when its exchange is not usable (its Ready condition says why). */
function fields(spec: ProviderSpec): CredentialField[] {
  try {
    return twoStepOptions(spec).credentialFields.map((f) => ({ name: f.name, secret: f.secret, required: f.required, label: f.label }));
  } catch {
    return [];
  }
}

function exchange(
  deps: ModeDeps,
  provider: ProviderResource,
  given: GivenCredentials,
  connectionConfig: Record<string, unknown>,
  path: string,
): Promise<StoredCredentials> {
  return exchangeNow(deps, provider, connectionConfig, path, (call) =>
    exchangeTwoStep({ ...call, fields: checkTwoStepFields(provider.spec, given, path) }),
  );
}

export const twoStep: AuthModeModule = {
  mode: 'TWO_STEP',
  fromImport: async (deps, input) => ({
    credentials: await exchange(deps, input.provider, input.given, importConfig(input), 'body.credentials'),
  }),
  // The flat username and password fit providers that exchange exactly those (the exchange checks which fields).
  fromFlatImport(deps, input) {
    const body = flatFields(input, ['username', 'password']);
    const given = JSON.parse(JSON.stringify({ type: 'TWO_STEP', username: body.username, password: body.password })) as GivenCredentials;
    return exchange(deps, input.provider, given, importConfig(input), 'body');
  },
  connect: {
    flow: 'form',
    fields,
    credentials: (deps, form) =>
      formOutcomeOf(() => exchange(deps, form.provider, { ...form.values, type: 'TWO_STEP' }, form.connectionConfig, 'values')),
  },
  refresh: twoStepStrategy,
  proxy: bearerInjection('token'),
  providerProblems(spec) {
    const parsed = TwoStepOptions.safeParse(spec.twoStep);
    if (parsed.success) return [];
    const first = parsed.error.issues[0];
    return [
      `TWO_STEP providers need a usable spec.twoStep (${first ? `${first.path.map(String).join('.')}: ${first.message}` : 'missing'})`,
    ];
  },
  integration: { clientBeforeConnect: false, accepts: [] },
};
