/**
 * APP_STORE: an App Store Connect API key (issuer, key ID, .p8 private key); an ES256 token minted at
 * import, in the form, and when a fetch or proxied call finds it about to expire (never on the
 * controller's schedule: minting is local); sent as a bearer token.
 */
import { z } from 'zod';
import { appStoreFromInput, appStoreTokenStrategy } from './app-store-token.js';
import type { AuthModeModule } from '../auth-mode.js';
import { formOutcomeOf } from '../shared/exchange.js';
import { noFlatFields } from '../shared/flat-fields.js';
import { bearerInjection } from '../shared/injection.js';
import { appStoreOptions } from './options.js';
import { shownTimestamp } from '../shared/credential-schemas.js';

const plain = (name: string) => ({ name, secret: false, required: true });
const FIELDS = [plain('issuer_id'), plain('key_id'), { name: 'private_key', secret: true, required: true }];

export const appStore: AuthModeModule = {
  mode: 'APP_STORE',
  credentialSchemas: {
    import: z
      .strictObject({
        type: z.literal('APP_STORE'),
        issuer_id: z.string().min(1).max(64),
        key_id: z.string().min(1).max(32),
        private_key: z.string().min(1).max(16_384).describe('Contents of the .p8 file'),
      })
      .describe('An App Store Connect API key; a token is minted at once (a key that cannot sign ES256 is a 400)'),
    shown: z.object({
      type: z.literal('APP_STORE'),
      issuer_id: z.string(),
      key_id: z.string(),
      private_key: z.string(),
      access_token: z.string().describe('An ES256 token for the App Store Connect API, valid until expires_at (at most 20 minutes)'),
      expires_at: shownTimestamp,
    }),
  },
  fromImport: (deps, { given, provider }) =>
    Promise.resolve({ credentials: appStoreFromInput(given, provider.spec, deps.clock.now(), 'body.credentials') }),
  fromFlatImport: (_deps, input) => noFlatFields(input),
  connect: {
    flow: 'form',
    fields: () => [...FIELDS],
    credentials: (deps, form) =>
      formOutcomeOf(() =>
        Promise.resolve(appStoreFromInput({ ...form.values, type: 'APP_STORE' }, form.provider.spec, deps.clock.now(), 'values')),
      ),
  },
  refresh: appStoreTokenStrategy,
  proxy: bearerInjection('access_token'),
  providerProblems: () => [],
  integration: { clientBeforeConnect: false, accepts: [] },
  options: appStoreOptions,
};
