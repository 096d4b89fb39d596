/**
 * OAUTH2_CC: the client credentials grant with the end user's (or an import's) client ID and secret:
 * checked by getting a token before anything is stored, a new token each renewal; sent as a bearer.
 * A Provider that authenticates with private_key_jwt asks the end user for the client ID alone: the
 * assertion is signed with the Integration's key, whose public half the end user registers with their client;
 * one that authenticates with tls_client_auth likewise (the Integration's TLS client certificate is the proof).
 * A Provider that requires a client certificate beside the secret (`clientCertificate`) gets the Integration's.
 * A Provider with `modeOptions.samlBearer` takes a SAML 2.0 bearer assertion instead (RFC 7522, ./saml-bearer.ts):
 * the end user types the client ID, the Integration's key signs a new assertion for every token.
 */
import { z } from 'zod';
import { clientCredentialsToken } from '../../auth/oauth2-authorization.js';
import { integrationKeys, type ClientCredentials } from '../../auth/oauth2-client.js';
import { clientFor, type RefreshStrategy } from '../../auth/refresh/strategies.js';
import type { OAuth2ClientCredentials } from '../../domain/credentials.js';
import { findAnswerTooLarge, LatchkeyError } from '../../domain/errors.js';
import type { ProviderSpec } from '../../k8s/resources.js';
import type { StoredCredentials } from '../../k8s/store.js';
import { providerAnswer } from '../../oplog/redact.js';
import type { AuthModeModule } from '../auth-mode.js';
import { compact, isoOrUndefined, notFlatImportable } from '../shared/flat-fields.js';
import { bearerInjection } from '../shared/injection.js';
import { CLIENT_KEYS } from '../shared/oauth-client.js';
import { expiresAtInput, rawAnswer, shownTimestamp } from '../shared/credential-schemas.js';
import { oauth2CcOptions, samlBearerGrant, samlBearerOf } from './saml-bearer.js';

/** The grant a token request makes in place of client credentials, if the Provider declares one (a new assertion each time). */
function grantOf(
  spec: ProviderSpec,
  client: ClientCredentials,
  connectionConfig: Record<string, unknown>,
  nowMs: number,
): { grant?: { type: string; params: Record<string, string> } } {
  const saml = samlBearerOf(spec);
  if (!saml) return {};
  return { grant: samlBearerGrant(spec, saml, { clientId: client.clientId, privateKey: client.privateKey, connectionConfig, nowMs }) };
}

/** A new token each time, with the connection's client (an import's) or else the Integration's. */
const refresh: RefreshStrategy = {
  canRefresh: () => true,
  async refresh(input) {
    const current = input.connection.credentials as unknown as OAuth2ClientCredentials;
    const client = current.client_id
      ? {
          clientId: current.client_id,
          clientSecret: current.client_secret,
          ...integrationKeys(input.catalog, input.namespace, input.integration),
        }
      : clientFor(input);
    const connectionConfig = input.connection.resource.spec.connectionConfig ?? {};
    const next = await clientCredentialsToken(
      {
        provider: input.provider,
        integration: input.integration,
        client,
        connectionConfig,
        fetch: input.fetch,
        timeoutSeconds: input.timeoutSeconds,
        ...grantOf(input.provider.spec, client, connectionConfig, input.now),
      },
      input.now,
      current,
    );
    return next as unknown as StoredCredentials;
  },
};

export const oauth2ClientCredentials: AuthModeModule = {
  mode: 'OAUTH2_CC',
  credentialSchemas: {
    import: z.strictObject({
      type: z.literal('OAUTH2_CC'),
      token: z.string().min(1),
      expires_at: expiresAtInput.optional(),
      client_id: z.string().min(1),
      client_secret: z.string().min(1),
    }),
    shown: z.object({
      type: z.literal('OAUTH2_CC'),
      token: z.string(),
      expires_at: shownTimestamp.optional(),
      client_id: z.string(),
      client_secret: z.string(),
      raw: rawAnswer,
    }),
  },
  fromImport: (_deps, { given }) =>
    Promise.resolve({
      credentials: compact({ ...given, expires_at: isoOrUndefined(given.expires_at), raw: { access_token: given.token } }),
    }),
  fromFlatImport: (_deps, input) => notFlatImportable(input),
  connect: {
    flow: 'form',
    fields: (spec) => [
      { name: 'clientId', secret: false, required: true },
      ...(typesNoSecret(spec) ? [] : [{ name: 'clientSecret', secret: true, required: true }]),
    ],
    async credentials(deps, form) {
      const keys = integrationKeys(deps.catalog, form.namespace, form.integration);
      const client: ClientCredentials = typesNoSecret(form.provider.spec)
        ? { clientId: form.values.clientId!, ...keys }
        : {
            clientId: form.values.clientId!,
            clientSecret: form.values.clientSecret!,
            ...(keys.certificate ? { certificate: keys.certificate } : {}),
          };
      // A SAML assertion sent is a credential for its minutes: kept out of any text of the provider's answer too.
      let sent: string | undefined;
      try {
        const now = deps.clock.now();
        const grant = grantOf(form.provider.spec, client, form.connectionConfig, now);
        sent = grant.grant?.params.assertion;
        const credentials = await clientCredentialsToken(
          {
            provider: form.provider,
            integration: form.integration,
            client,
            connectionConfig: form.connectionConfig,
            fetch: deps.fetch,
            ...grant,
          },
          now,
        );
        return { credentials: credentials as unknown as StoredCredentials };
      } catch (err) {
        const tooLarge = findAnswerTooLarge(err);
        if (tooLarge) return { refused: tooLarge };
        if (err instanceof LatchkeyError && (err.code === 'integration_not_configured' || err.kind === 'invalid_input')) throw err;
        const answer = providerAnswer(err, [client.clientSecret, sent]);
        const refused = new LatchkeyError(
          'invalid_input',
          'invalid_credentials',
          `${form.provider.spec.displayName} did not accept this client ID${typesNoSecret(form.provider.spec) ? '' : ' and secret'}.`,
        );
        return { refused, detail: `Client credentials rejected: ${answer}`, answer };
      }
    },
  },
  refresh,
  proxy: bearerInjection('token'),
  providerProblems: (spec) => (spec.tokenUrl ? [] : ['OAUTH2_CC providers need spec.tokenUrl']),
  integration: {
    secret: { keys: CLIENT_KEYS, why: 'the OAuth client ID and secret' },
    clientBeforeConnect: false,
    shownAs: 'OAUTH2',
    accepts: ['OAUTH2'],
  },
  options: oauth2CcOptions,
};

/** The Provider authenticates the client with the Integration's key or certificate alone (no client secret is typed). */
function typesNoSecret(spec: ProviderSpec): boolean {
  return (
    spec.tokenRequestAuthMethod === 'private_key_jwt' ||
    spec.tokenRequestAuthMethod === 'tls_client_auth' ||
    spec.modeOptions?.samlBearer !== undefined
  );
}
