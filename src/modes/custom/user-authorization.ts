/**
 * CUSTOM's part of the app install flow (src/modes/shared/app-install-flow.ts): the user authorizes
 * during the installation; the user token from the callback's `code` must see the installation among
 * the user's installations, which proves the installation is the end user's.
 */
import { resolveClient } from '../../auth/oauth2-client.js';
import { fromRefresh, notConfigured, refused, type UserAuthorization } from '../shared/app-install-flow.js';
import { exchangeUserCode, userCanAccessInstallation, type UserToken } from './app-user-tokens.js';

export const customUserAuthorization: UserAuthorization = {
  clientReady: (store, namespace, integration) => Boolean(resolveClient(store, namespace, integration)?.clientSecret),

  async authorize(deps, { state, query, integration, provider, name, installationId, fill }) {
    const code = query.get('code');
    if (!code) throw refused('missing_code', `${name} did not send the user authorization. Please start again.`);
    const client = resolveClient(deps.catalog, state.namespace, integration);
    const userTokenUrl = provider.spec.appInstallation?.userTokenUrl;
    const listUrl = provider.spec.appInstallation?.userInstallationsUrl;
    if (!client?.clientSecret || !userTokenUrl || !listUrl) throw notConfigured('its client ID and secret are missing');
    const common = { fetch: deps.fetch, now: deps.clock.now() };
    let user: UserToken;
    try {
      user = await exchangeUserCode({
        ...common,
        tokenUrl: fill(userTokenUrl),
        clientId: client.clientId,
        clientSecret: client.clientSecret,
        code,
        redirectUri: state.redirectUri,
      });
      const mine = await userCanAccessInstallation({
        ...common,
        userInstallationsUrl: fill(listUrl),
        userToken: user.access_token,
        installationId,
      });
      if (!mine) throw refused('installation_not_yours', `This ${name} installation is not one of the accounts you can access.`);
    } catch (err) {
      fromRefresh(err, name);
    }
    return user;
  },
};
