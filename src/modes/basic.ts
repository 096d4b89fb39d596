/** BASIC: a username and password, sent as HTTP Basic unless the Provider's templates place them; never renewed. */
import { LatchkeyError } from '../domain/errors.js';
import type { AuthModeModule } from './auth-mode.js';
import { flatFields } from './flat-fields.js';
import { templatesUse } from './injection.js';

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

export const basic: AuthModeModule = {
  mode: 'BASIC',
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
    credentials: (_deps, { values }) =>
      Promise.resolve({ credentials: { type: 'BASIC', username: values.username!, password: values.password ?? '' } }),
  },
  proxy: {
    accessTokenField: 'access_token',
    refreshesOnUse: false,
    signsFormBody: false,
    authorization({ spec, credentials }) {
      if (templatesUse(spec, '${username}') || templatesUse(spec, '${password}')) return undefined;
      const username = str(credentials.username);
      if (username === undefined) throw new LatchkeyError('invalid_input', 'missing_credentials', 'The connection has no username');
      return `Basic ${Buffer.from(`${username}:${str(credentials.password) ?? ''}`, 'utf8').toString('base64')}`;
    },
  },
  providerProblems: () => [],
  integration: { clientBeforeConnect: false, accepts: [], needsNoClient: true },
};
