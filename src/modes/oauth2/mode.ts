/**
 * OAUTH2: the authorization code flow (PKCE, `state`); imported tokens with their expiry; renewed
 * with the refresh token grant when there is a refresh token; sent as a bearer token.
 */
import { z } from 'zod';
import { refreshOAuth2Tokens } from '../../auth/oauth2-authorization.js';
import { clientFor, type RefreshStrategy, type StrategyInput } from '../../auth/refresh/strategies.js';
import { RefreshError } from '../../auth/refresh/errors.js';
import { renewSession, sessionStep } from '../../auth/post-connection.js';
import type { OAuth2Credentials } from '../../domain/credentials.js';
import { LatchkeyError } from '../../domain/errors.js';
import type { ProviderSpec } from '../../k8s/resources.js';
import type { StoredCredentials } from '../../k8s/store.js';
import type { AuthModeModule } from '../auth-mode.js';
import { clientOverride, compact, flatFields, isoOrUndefined, isoTimestamp, TOKEN_FIELDS } from '../shared/flat-fields.js';
import { bearerInjection } from '../shared/injection.js';
import { CLIENT_KEYS } from '../shared/oauth-client.js';
import { oauth2RedirectFlow } from './redirect-flow.js';
import { grantImportFields, grantShownFields, rawAnswer } from '../shared/credential-schemas.js';

/**
 * The refresh token grant; a response without a new refresh token keeps the old one. A Provider with a
 * session step (Bullhorn's login) logs in again with the new access token: its docs renew an expired
 * session so. The values the login gives again (Bullhorn's `restUrl`) are reported for the refresher to
 * store when they changed. A failed login is reported as the refresh's failure, and the new tokens are
 * stored all the same (the provider may have spent the refresh token), with the old session token.
 */
const refresh: RefreshStrategy = {
  canRefresh: (c) => typeof c.refresh_token === 'string' && c.refresh_token.length > 0,
  async refresh(input) {
    const next = await refreshedTokens(input);
    const step = sessionStep(input.provider.spec);
    if (!step) return next;
    const { resource } = input.connection;
    try {
      const session = await renewSession(
        { fetch: input.fetch, oplog: input.oplog, clock: { now: () => input.now } },
        {
          provider: input.provider,
          accessToken: String(next.access_token),
          connectionConfig: resource.spec.connectionConfig ?? {},
          log: {
            namespace: input.namespace,
            operation: 'refresh',
            integration: input.integration.metadata.name,
            connectionId: resource.spec.connectionId,
            endUserId: resource.spec.endUser?.id,
            connection: { name: resource.metadata.name, uid: resource.metadata.uid },
          },
        },
      );
      input.report.providerValues = { values: session.values, source: `the ${step.name} answer after the refresh` };
      return { ...next, session_token: session.token };
    } catch (err) {
      input.report.failedAfterTokens =
        err instanceof RefreshError
          ? err
          : new RefreshError('provider unavailable: the session login after the token refresh failed', {
              permanent: false,
              code: 'provider_unavailable',
            });
      return next;
    }
  },
};

async function refreshedTokens(input: StrategyInput): Promise<StoredCredentials> {
  const current = input.connection.credentials as unknown as OAuth2Credentials;
  const next = await refreshOAuth2Tokens(
    {
      provider: input.provider,
      client: clientFor(input, current.config_override),
      connectionConfig: input.connection.resource.spec.connectionConfig,
      fetch: input.fetch,
      timeoutSeconds: input.timeoutSeconds,
    },
    current,
    input.now,
  );
  return next as unknown as StoredCredentials;
}

export const oauth2: AuthModeModule = {
  mode: 'OAUTH2',
  credentialSchemas: {
    import: z.strictObject({
      type: z.literal('OAUTH2'),
      ...grantImportFields,
      config_override: z.strictObject({ client_id: z.string().optional(), client_secret: z.string().optional() }).optional(),
    }),
    shown: z.object({
      type: z.literal('OAUTH2'),
      ...grantShownFields,
      raw: rawAnswer,
    }),
  },
  fromImport(_deps, { given }) {
    const { config_override, ...rest } = given;
    return Promise.resolve({
      credentials: compact({
        ...rest,
        expires_at: isoOrUndefined(given.expires_at),
        raw: compact({ ...rest, type: undefined, expires_at: isoOrUndefined(given.expires_at) }),
        config_override,
      }),
    });
  },
  fromFlatImport(deps, input) {
    const body = flatFields(input, TOKEN_FIELDS, ['access_token']);
    const expiresAt =
      body.expires_at !== undefined
        ? isoTimestamp(new Date(body.expires_at), 'expires_at')
        : body.expires_in !== undefined
          ? isoTimestamp(new Date(deps.clock.now() + body.expires_in * 1000), 'expires_in')
          : undefined;
    if (!expiresAt && !body.no_expiration) {
      throw new LatchkeyError(
        'invalid_input',
        'missing_expiration',
        "OAuth 2 import needs expires_at (preferred) or expires_in, or no_expiration: true when the provider's tokens never expire",
        {
          errors: [
            { path: 'body.expires_at', message: 'required unless expires_in or no_expiration is given', code: 'missing_expiration' },
          ],
        },
      );
    }
    const raw: Record<string, unknown> = { access_token: body.access_token };
    if (body.refresh_token) raw.refresh_token = body.refresh_token;
    if (body.expires_in !== undefined) raw.expires_in = body.expires_in;
    return Promise.resolve({
      type: 'OAUTH2',
      access_token: body.access_token!,
      ...(body.refresh_token ? { refresh_token: body.refresh_token } : {}),
      ...(expiresAt ? { expires_at: expiresAt } : {}),
      raw,
      ...clientOverride(body),
    });
  },
  // What the provider returns (`connectionConfiguration[].from`) is never asked of the end user.
  connect: { flow: 'redirect', ...oauth2RedirectFlow },
  refresh,
  proxy: bearerInjection('access_token'),
  providerProblems: (spec) => [
    ...(!spec.authorizationUrl || !spec.tokenUrl ? ['OAUTH2 providers need spec.authorizationUrl and spec.tokenUrl'] : []),
    // CEL cannot type a free value: the CRD leaves errorWhen.equals and notEquals to this check.
    ...errorWhenProblems(spec.tokenResponse?.errorWhen),
    ...(spec.connectionConfiguration ?? []).flatMap((f) =>
      typeof f !== 'string' && f.from?.match !== undefined && !isRegExp(f.from.match)
        ? [`spec.connectionConfiguration ${f.name}: from.match is not a valid regular expression`]
        : [],
    ),
    ...((spec.postConnection?.steps ?? []).filter((step) => step.sessionToken !== undefined).length > 1
      ? ['spec.postConnection has more than one step with a sessionToken']
      : []),
    ...(spec.postConnection?.steps ?? []).flatMap((step, i) =>
      step.pick && !['string', 'number', 'boolean'].includes(typeof step.pick.equals)
        ? [`spec.postConnection.steps[${i}].pick.equals must be a string, a number or a boolean`]
        : [],
    ),
  ],
  integration: {
    secret: { keys: CLIENT_KEYS, why: 'the OAuth client ID and secret' },
    clientBeforeConnect: true,
    shownAs: 'OAUTH2',
    accepts: ['OAUTH2'],
  },
};

const SCALARS = ['string', 'number', 'boolean'];

/** `errorWhen` names exactly one of `equals` and `notEquals`, a string, a number or a boolean. */
function errorWhenProblems(when: NonNullable<ProviderSpec['tokenResponse']>['errorWhen']): string[] {
  if (!when) return [];
  if (when.equals === undefined && when.notEquals === undefined) return ['spec.tokenResponse.errorWhen needs equals or notEquals'];
  if (when.notEquals !== undefined) {
    if (when.equals !== undefined) return ['spec.tokenResponse.errorWhen takes equals or notEquals, not both'];
    return SCALARS.includes(typeof when.notEquals)
      ? []
      : ['spec.tokenResponse.errorWhen.notEquals must be a string, a number or a boolean'];
  }
  return SCALARS.includes(typeof when.equals) ? [] : ['spec.tokenResponse.errorWhen.equals must be a string, a number or a boolean'];
}

function isRegExp(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}
