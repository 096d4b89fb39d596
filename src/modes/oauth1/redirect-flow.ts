/**
 * OAUTH1's redirect flow, OAuth 1.0a's three legs: temporary credentials (their secret kept in the
 * flow records until the callback), the end user's authorization, then token credentials for the
 * callback's verifier.
 */
import { sealFlowState } from '../../auth/flow-state.js';
import { fillProviderUrl } from '../../catalog/connection-config.js';
import { LatchkeyError } from '../../domain/errors.js';
import type { StoredCredentials } from '../../k8s/store.js';
import type { RedirectFlow } from '../auth-mode.js';
import { requireClient } from '../shared/oauth-client.js';
import { authorizationUrl, requestTemporaryCredentials, requestTokenCredentials, type OAuth1Consumer } from '../shared/oauth1.js';
import { atProvider, exchangeAtProvider } from '../shared/provider-failure.js';

const NO_KEYS: ReadonlySet<string> = new Set();

export const oauth1RedirectFlow: RedirectFlow = {
  async start(deps, input) {
    const { integration, provider, base } = input;
    const spec = provider.spec;
    const connectionConfig = await input.checkedConfig();
    const client = requireClient(deps.catalog, base.namespace, integration);
    input.secrets.push(client.clientSecret);
    const url = await atProvider(async () => {
      const state = sealFlowState({ ...base, mode: spec.authMode, connectionConfig }, input.secretKey);
      const callback = new URL(base.redirectUri);
      callback.searchParams.set('state', state);
      const consumer: OAuth1Consumer = { consumerKey: client.clientId, consumerSecret: client.clientSecret, fetch: deps.fetch };
      const temporary = await requestTemporaryCredentials(
        consumer,
        fillProviderUrl(spec, spec.requestTokenUrl!, connectionConfig),
        callback.href,
      );
      await deps.flows.putRequestSecret(base.namespace, base.fid, temporary, base.exp * 1000);
      const appNameParam = spec.appNameParam;
      const params: Record<string, string> = {
        ...(spec.authorizationParams ?? {}),
        // The consent page names the application from it (Trello's `name`); an Integration's own params still win.
        ...(appNameParam ? { [appNameParam]: input.appName } : {}),
        ...(integration.spec.authorizationParams ?? {}),
      };
      // OAuth 1.0a has no scope parameter; providers that take scopes take them on the authorize URL (Trello's `scope`).
      const scopes = integration.spec.scopes?.length ? integration.spec.scopes : (spec.defaultScopes ?? []);
      if (scopes.length) params.scope = scopes.join(spec.scopeSeparator ?? ' ');
      return authorizationUrl(fillProviderUrl(spec, spec.authorizationUrl!, connectionConfig), temporary.token, params);
    });
    return { url: url.href, to: spec.displayName };
  },

  async complete(deps, input) {
    const { state, integration, provider, url } = input;
    const q = url.searchParams;
    const client = requireClient(deps.catalog, state.namespace, integration);
    input.secrets.push(client.clientSecret);
    const credentials = await exchangeAtProvider(input.name, input.secrets, async () => {
      const temporary = await deps.flows.takeRequestSecret(state.namespace, state.fid);
      input.secrets.push(temporary?.tokenSecret);
      const verifier = q.get('oauth_verifier');
      if (!temporary || temporary.token !== q.get('oauth_token') || !verifier) {
        throw new LatchkeyError(
          'invalid_input',
          'invalid_state',
          'This authorization response does not match the request. Please start again.',
        );
      }
      const consumer: OAuth1Consumer = { consumerKey: client.clientId, consumerSecret: client.clientSecret, fetch: deps.fetch };
      const tokenUrl = fillProviderUrl(provider.spec, provider.spec.tokenUrl!, state.connectionConfig);
      return (await requestTokenCredentials(consumer, tokenUrl, temporary, verifier)) as unknown as StoredCredentials;
    });
    return { credentials, connectionConfig: state.connectionConfig };
  },

  /** The provider answered an error: the temporary credentials' secret is dropped. */
  async abandon(deps, state) {
    await deps.flows.takeRequestSecret(state.namespace, state.fid);
  },

  suppliedKeys: () => NO_KEYS,
};
