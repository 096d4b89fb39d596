/**
 * OAUTH1: the OAuth 1.0a three-legged flow (temporary credentials, authorization, token credentials);
 * imported tokens never expire; every proxied call is signed HMAC-SHA1 with the Integration's consumer.
 */
import { z } from 'zod';
import { signRequest } from '../shared/oauth1.js';
import { LatchkeyError } from '../../domain/errors.js';
import type { AuthModeModule } from '../auth-mode.js';
import { flatFields } from '../shared/flat-fields.js';
import { CLIENT_KEYS } from '../shared/oauth-client.js';
import { oauth1RedirectFlow } from './redirect-flow.js';
import { rawAnswer } from '../shared/credential-schemas.js';

export const oauth1: AuthModeModule = {
  mode: 'OAUTH1',
  credentialSchemas: {
    import: z.strictObject({ type: z.literal('OAUTH1'), oauth_token: z.string().min(1), oauth_token_secret: z.string().min(1) }),
    shown: z.object({ type: z.literal('OAUTH1'), oauth_token: z.string(), oauth_token_secret: z.string(), raw: rawAnswer }),
  },
  fromImport: (_deps, { given }) =>
    Promise.resolve({ credentials: { ...given, raw: { oauth_token: given.oauth_token, oauth_token_secret: given.oauth_token_secret } } }),
  fromFlatImport(_deps, input) {
    const body = flatFields(input, ['oauth_token', 'oauth_token_secret'], ['oauth_token', 'oauth_token_secret']);
    return Promise.resolve({
      type: 'OAUTH1',
      oauth_token: body.oauth_token!,
      oauth_token_secret: body.oauth_token_secret!,
      raw: { oauth_token: body.oauth_token, oauth_token_secret: body.oauth_token_secret },
    });
  },
  connect: { flow: 'redirect', ...oauth1RedirectFlow },
  proxy: {
    accessTokenField: 'access_token',
    refreshesOnUse: false,
    signsFormBody: true,
    authorization(input) {
      const consumer = input.oauth1Consumer?.();
      if (!consumer)
        throw new LatchkeyError(
          'invalid_input',
          'missing_client_credentials',
          'The integration has no consumer key and secret (clientSecretRef) to sign OAuth 1.0a requests',
        );
      const { oauth_token: token, oauth_token_secret: tokenSecret } = input.credentials;
      if (typeof token !== 'string' || typeof tokenSecret !== 'string')
        throw new LatchkeyError('invalid_input', 'missing_credentials', 'The connection has no OAuth 1.0a token');
      return signRequest({
        method: input.method,
        url: input.url().toString(),
        consumerKey: consumer.consumerKey,
        consumerSecret: consumer.consumerSecret,
        token,
        tokenSecret,
        bodyParams: input.formParams,
      });
    },
  },
  providerProblems(spec) {
    const problems: string[] = [];
    if (!spec.authorizationUrl || !spec.tokenUrl) problems.push('OAUTH1 providers need spec.authorizationUrl and spec.tokenUrl');
    if (!spec.requestTokenUrl) problems.push('OAUTH1 providers need spec.requestTokenUrl');
    return problems;
  },
  integration: {
    secret: { keys: CLIENT_KEYS, why: 'the consumer key and secret' },
    clientBeforeConnect: true,
    shownAs: 'OAUTH1',
    accepts: ['OAUTH1'],
  },
};
