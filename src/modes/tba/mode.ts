/**
 * TBA: NetSuite token-based authentication: the account's token ID and secret, every proxied call
 * signed HMAC-SHA256 with the Integration's consumer key and secret (a connection's override first)
 * and the account ID as realm; never renewed.
 */
import { z } from 'zod';
import { tbaAuthorization } from './tba-signing.js';
import type { AuthModeModule } from '../auth-mode.js';
import { clientOverride, compact, flatFields } from '../shared/flat-fields.js';
import { CLIENT_KEYS } from '../shared/oauth-client.js';
import { tbaOptions } from './options.js';

export const tba: AuthModeModule = {
  mode: 'TBA',
  credentialSchemas: {
    import: z.strictObject({
      type: z.literal('TBA'),
      token_id: z.string().min(1).max(1024).describe('The access token ID created in NetSuite for this account'),
      token_secret: z.string().min(1).max(1024),
      config_override: z
        .strictObject({ client_id: z.string().min(1).optional(), client_secret: z.string().min(1).optional() })
        .optional()
        .describe("The consumer key and secret when they are not the Integration's (never returned)"),
    }),
    shown: z.object({ type: z.literal('TBA'), token_id: z.string(), token_secret: z.string() }),
  },
  fromImport(_deps, { given }) {
    const override = given.config_override as object | undefined;
    return Promise.resolve({
      credentials: compact({ ...given, config_override: override && Object.keys(override).length ? override : undefined }),
    });
  },
  // The consumer key and secret are the Integration's unless overridden, as for OAuth 2.
  fromFlatImport(_deps, input) {
    const body = flatFields(
      input,
      ['token_id', 'token_secret', 'oauth_client_id_override', 'oauth_client_secret_override'],
      ['token_id', 'token_secret'],
    );
    return Promise.resolve({ type: 'TBA', token_id: body.token_id!, token_secret: body.token_secret!, ...clientOverride(body) });
  },
  connect: {
    flow: 'form',
    // The access token made in NetSuite; the account ID is connection configuration, the consumer is the Integration's.
    fields: () => [
      { name: 'tokenId', secret: false, required: true },
      { name: 'tokenSecret', secret: true, required: true },
    ],
    credentials: (_deps, { values }) =>
      Promise.resolve({ credentials: { type: 'TBA', token_id: values.tokenId!, token_secret: values.tokenSecret! } }),
  },
  proxy: {
    accessTokenField: 'access_token',
    refreshesOnUse: false,
    signsFormBody: true,
    authorization: (input) =>
      tbaAuthorization({
        settings: input.spec.tba,
        credentials: input.credentials,
        connectionConfig: input.connectionConfig,
        consumer: input.oauth1Consumer?.(input.credentials.config_override as { client_id?: string; client_secret?: string } | undefined),
        method: input.method,
        url: input.url(),
        formParams: input.formParams,
      }),
  },
  providerProblems(spec) {
    const key = spec.tba?.accountIdKey ?? 'accountId';
    const names = (spec.connectionConfiguration ?? []).map((f) => (typeof f === 'string' ? f : f.name));
    return names.includes(key) ? [] : [`TBA providers need the account ID (the realm): "${key}" listed in spec.connectionConfiguration`];
  },
  integration: {
    // NetSuite's consumer key and secret (the integration record's), which sign every request.
    secret: { keys: CLIENT_KEYS, why: "the integration record's consumer key and secret" },
    clientBeforeConnect: true,
    shownAs: 'TBA',
    accepts: ['TBA'],
  },
  options: tbaOptions,
};
