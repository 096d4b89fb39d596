/** BASIC: a username and password, sent as HTTP Basic unless the Provider's templates place them; never renewed. */
import { z } from 'zod';
import { LatchkeyError } from '../../domain/errors.js';
import type { AuthModeModule, ProxyInjection } from '../auth-mode.js';
import { checkedFormCredentials } from '../shared/typed-check.js';
import { flatFields } from '../shared/flat-fields.js';
import { templatesUse } from '../shared/injection.js';

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

const injection: ProxyInjection = {
  accessTokenField: 'access_token',
  refreshesOnUse: false,
  signsFormBody: false,
  authorization({ spec, credentials }) {
    if (templatesUse(spec, '${username}') || templatesUse(spec, '${password}')) return undefined;
    const username = str(credentials.username);
    if (username === undefined) throw new LatchkeyError('invalid_input', 'missing_credentials', 'The connection has no username');
    return `Basic ${Buffer.from(`${username}:${str(credentials.password) ?? ''}`, 'utf8').toString('base64')}`;
  },
};

export const basic: AuthModeModule = {
  mode: 'BASIC',
  credentialSchemas: {
    import: z.strictObject({ type: z.literal('BASIC'), username: z.string(), password: z.string() }),
    shown: z.object({ type: z.literal('BASIC'), username: z.string(), password: z.string() }),
  },
  fromImport: (_deps, { given }) => Promise.resolve({ credentials: { ...given } }),
  fromFlatImport(_deps, input) {
    const body = flatFields(input, ['username', 'password'], ['username', 'password']);
    return Promise.resolve({ type: 'BASIC', username: body.username!, password: body.password! });
  },
  connect: {
    flow: 'form',
    fields: () => [
      { name: 'username', secret: false, required: true },
      { name: 'password', secret: true, required: false },
    ],
    // Checked with the provider's verification call, when it declares one.
    credentials: (deps, form) =>
      checkedFormCredentials(
        deps,
        form,
        { type: 'BASIC', username: form.values.username!, password: form.values.password ?? '' },
        injection,
        'username and password',
      ),
  },
  proxy: injection,
  providerProblems: () => [],
  integration: { clientBeforeConnect: false, accepts: [], needsNoClient: true },
};
