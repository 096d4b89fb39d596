/**
 * BASIC: a username and password, sent as HTTP Basic unless the Provider's templates place them; never renewed.
 * A field the Provider fixes (`spec.basic.fixed`, ./options.ts) is never asked and always sent as fixed.
 */
import { z } from 'zod';
import { LatchkeyError } from '../../domain/errors.js';
import type { AuthModeModule, ProxyInjection } from '../auth-mode.js';
import { checkedFormCredentials } from '../shared/typed-check.js';
import { flatFields } from '../shared/flat-fields.js';
import { templatesUse } from '../shared/injection.js';
import { basicOptions, BASIC_FIELDS, fixedFields, withFixedFields } from './options.js';

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

const injection: ProxyInjection = {
  accessTokenField: 'access_token',
  refreshesOnUse: false,
  signsFormBody: false,
  authorization({ spec, credentials }) {
    if (templatesUse(spec, '${username}') || templatesUse(spec, '${password}')) return undefined;
    const fixed = fixedFields(spec);
    const username = fixed.username ?? str(credentials.username);
    if (username === undefined) throw new LatchkeyError('invalid_input', 'missing_credentials', 'The connection has no username');
    const password = fixed.password ?? str(credentials.password) ?? '';
    return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
  },
};

export const basic: AuthModeModule = {
  mode: 'BASIC',
  credentialSchemas: {
    // Both optional here: which one a Provider fixes is its own (the import checks it, ./options.ts).
    import: z.strictObject({ type: z.literal('BASIC'), username: z.string().optional(), password: z.string().optional() }),
    shown: z.object({ type: z.literal('BASIC'), username: z.string(), password: z.string() }),
  },
  fromImport: (_deps, { provider, given }) =>
    Promise.resolve().then(() => ({
      credentials: {
        type: 'BASIC',
        ...withFixedFields(
          provider.spec,
          provider.metadata.name,
          { username: str(given.username), password: str(given.password) },
          (f) => `body.credentials.${f}`,
        ),
      },
    })),
  fromFlatImport: (_deps, input) =>
    Promise.resolve().then(() => {
      const body = flatFields(input, ['username', 'password']);
      return { type: 'BASIC', ...withFixedFields(input.provider.spec, input.provider.metadata.name, body, (f) => `body.${f}`) };
    }),
  connect: {
    flow: 'form',
    fields(spec) {
      const fixed = fixedFields(spec);
      const fixesOne = Object.keys(fixed).length > 0;
      // The field left to type is required once the other is fixed (lemlist's key); otherwise an empty password is allowed.
      return BASIC_FIELDS.filter((name) => fixed[name] === undefined).map((name) => ({
        name,
        secret: name === 'password',
        required: name === 'username' || fixesOne,
      }));
    },
    // Checked with the provider's verification call, when it declares one.
    credentials(deps, form) {
      const spec = form.provider.spec;
      const fixed = fixedFields(spec);
      const typed = (name: 'username' | 'password', fallback?: string) =>
        fixed[name] === undefined ? (form.values[name] ?? fallback) : undefined;
      const values = withFixedFields(
        spec,
        form.provider.metadata.name,
        { username: typed('username'), password: typed('password', Object.keys(fixed).length ? undefined : '') },
        (f) => f,
      );
      return checkedFormCredentials(deps, form, { type: 'BASIC', ...values }, injection, 'username and password');
    },
  },
  proxy: injection,
  providerProblems: () => [],
  integration: { clientBeforeConnect: false, accepts: [], needsNoClient: true },
  options: basicOptions,
};
