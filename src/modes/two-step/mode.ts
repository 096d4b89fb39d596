/**
 * TWO_STEP: the fields the Provider declares (`twoStep.credentialFields`) exchanged at its token
 * endpoint for a token, at import, in the form and again before the token expires; sent as a bearer.
 */
import { z } from 'zod';
import { checkTwoStepFields, exchangeTwoStep, twoStepOptions, twoStepStrategy, TwoStepOptions } from './two-step.js';
import type { ProviderSpec } from '../../k8s/resources.js';
import type { AuthModeModule, CredentialField, GivenCredentials } from '../auth-mode.js';
import { exchangeNow, formByExchange, importByExchange, importConfig, type Exchange } from '../shared/exchange.js';
import { flatFields } from '../shared/flat-fields.js';
import { bearerInjection } from '../shared/injection.js';
import { twoStepProviderOptions } from './options.js';
import { rawAnswer, shownTimestamp } from '../shared/credential-schemas.js';

/** The fields the Provider declares; none when its exchange is not usable (its Ready condition says why). */
function fields(spec: ProviderSpec): CredentialField[] {
  try {
    return twoStepOptions(spec).credentialFields.map((f) => ({ name: f.name, secret: f.secret, required: f.required, label: f.label }));
  } catch {
    return [];
  }
}

/** The fields checked against the Provider's, then exchanged. */
const exchange: Exchange = (call, given, path) => exchangeTwoStep({ ...call, fields: checkTwoStepFields(call.provider.spec, given, path) });

export const twoStep: AuthModeModule = {
  mode: 'TWO_STEP',
  credentialSchemas: {
    import: z
      .object({ type: z.literal('TWO_STEP') })
      .catchall(z.string().max(4096))
      .describe("The fields the provider's `twoStep.credentialFields` name; exchanged for a token at once (a refusal is a 400)"),
    shown: z
      .object({
        type: z.literal('TWO_STEP'),
        token: z.string().describe("The provider's token for the stored fields (exchanged again before expires_at)"),
        expires_at: shownTimestamp.optional(),
        raw: rawAnswer,
      })
      .catchall(z.unknown()),
  },
  fromImport: importByExchange(exchange),
  // The flat username and password fit providers that exchange exactly those (the exchange checks which fields).
  fromFlatImport(deps, input) {
    const body = flatFields(input, ['username', 'password']);
    const given = JSON.parse(JSON.stringify({ type: 'TWO_STEP', username: body.username, password: body.password })) as GivenCredentials;
    return exchangeNow(deps, input.provider, given, importConfig(input), 'body', exchange);
  },
  connect: {
    flow: 'form',
    fields,
    credentials: formByExchange('TWO_STEP', exchange),
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
  options: twoStepProviderOptions,
};
