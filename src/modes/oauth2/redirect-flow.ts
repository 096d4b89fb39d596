/**
 * OAUTH2's redirect flow: the authorization code grant with PKCE (unless the Provider disables it).
 * The start sends the browser to the authorization URL with the sealed state; the callback exchanges
 * the code, the callback's values first (the token URL may use them). The Provider's post-connection
 * values are taken after the token by the Connect flow (`providerValuesFrom`).
 */
import { sealFlowState, type FlowState } from '../../auth/flow-state.js';
import {
  buildAuthorizationRedirect,
  exchangeAuthorizationCode,
  newCodeVerifier,
  type OAuth2FlowInput,
} from '../../auth/oauth2-authorization.js';
import { callbackValues } from '../../auth/post-connection.js';
import { providerValueKeys } from '../../auth/provider-answers.js';
import type { StoredCredentials } from '../../k8s/store.js';
import type { RedirectFlow } from '../auth-mode.js';
import { requireClient } from '../shared/oauth-client.js';
import { atProvider, exchangeAtProvider } from '../shared/provider-failure.js';

/** What a connect session asked of this flow (Nango's `integrations_config_defaults`): its scopes and authorization parameters. */
function sessionScopes(state: Pick<FlowState, 'scopes' | 'authorizationParams'>): Pick<OAuth2FlowInput, 'scopes' | 'authorizationParams'> {
  return {
    ...(state.scopes?.length ? { scopes: state.scopes } : {}),
    ...(state.authorizationParams ? { authorizationParams: state.authorizationParams } : {}),
  };
}

export const oauth2RedirectFlow: RedirectFlow = {
  async start(deps, input) {
    const { integration, provider, base } = input;
    const connectionConfig = await input.checkedConfig();
    const client = requireClient(deps.catalog, base.namespace, integration);
    input.secrets.push(client.clientSecret);
    const url = await atProvider(async () => {
      const codeVerifier = provider.spec.disablePkce ? undefined : newCodeVerifier();
      const state = sealFlowState({ ...base, mode: provider.spec.authMode, connectionConfig, codeVerifier }, input.secretKey);
      const flow: OAuth2FlowInput = { provider, integration, client, connectionConfig, fetch: deps.fetch, ...sessionScopes(base) };
      return buildAuthorizationRedirect(flow, { redirectUri: base.redirectUri, state, codeVerifier });
    });
    return { url: url.href, to: provider.spec.displayName };
  },

  async complete(deps, input) {
    const { state, integration, provider, url } = input;
    const client = requireClient(deps.catalog, state.namespace, integration);
    input.secrets.push(client.clientSecret);
    const { credentials, exchangeConfig } = await exchangeAtProvider(input.name, input.secrets, async () => {
      // The callback's values come first: the token URL may use them (a reconnect takes them afresh).
      const exchangeConfig = { ...input.exchangeConfig, ...callbackValues(provider.spec, url.searchParams, input.exchangeConfig) };
      const flow: OAuth2FlowInput = {
        provider,
        integration,
        client,
        connectionConfig: exchangeConfig,
        fetch: deps.fetch,
        ...sessionScopes(state),
      };
      const answer = await exchangeAuthorizationCode(
        flow,
        url,
        { redirectUri: state.redirectUri, expectedState: input.stateValue, codeVerifier: state.codeVerifier },
        deps.clock.now(),
      );
      return { credentials: answer as unknown as StoredCredentials, exchangeConfig };
    });
    return {
      credentials,
      connectionConfig: state.connectionConfig,
      ...(providerValueKeys(provider.spec).all.size ? { providerValuesFrom: exchangeConfig } : {}),
    };
  },

  suppliedKeys: (spec) => providerValueKeys(spec).all,
};
