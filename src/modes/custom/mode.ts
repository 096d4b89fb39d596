/**
 * CUSTOM: an app installation with the user's authorization during the installation (a GitHub App
 * with "request user authorization"): connections only come from the install flow
 * (src/modes/shared/app-install-flow.ts), which proves through the user's token that the installation is
 * theirs. Renewed ahead: the installation token every time, the user token when it would lapse first;
 * the installation token is sent as a bearer (the user's is for the application's own calls).
 */
import { customAppStrategy } from './custom-app-refresh.js';
import type { AuthModeModule } from '../auth-mode.js';
import { appInstallFlow } from '../shared/app-install-flow.js';
import { notFlatImportable } from '../shared/flat-fields.js';
import { bearerInjection } from '../shared/injection.js';
import { CLIENT_KEYS } from '../shared/oauth-client.js';
import { customUserAuthorization } from './user-authorization.js';
import { appInstallationOptions } from '../shared/app-installation-options.js';

export const custom: AuthModeModule = {
  mode: 'CUSTOM',
  // Neither body imports it, and no answer shows it (connections of it are made by the Connect flow).
  credentialSchemas: {},
  fromImport: (_deps, input) => notFlatImportable(input),
  fromFlatImport: (_deps, input) => notFlatImportable(input),
  connect: { flow: 'redirect', ...appInstallFlow(customUserAuthorization) },
  refresh: customAppStrategy,
  refreshOnAppJwtRequest: true,
  proxy: bearerInjection('access_token'),
  providerProblems(spec) {
    // The install page, the installation token URL, and the user authorization's token and installations URLs.
    const missing = [
      ['authorizationUrl', spec.authorizationUrl],
      ['tokenUrl', spec.tokenUrl],
      ['appInstallation.userTokenUrl', spec.appInstallation?.userTokenUrl],
      ['appInstallation.userInstallationsUrl', spec.appInstallation?.userInstallationsUrl],
    ].flatMap(([field, value]) => (value ? [] : [`spec.${field}`]));
    return missing.length ? [`CUSTOM providers need ${missing.join(', ')}`] : [];
  },
  integration: {
    // The app's keys mint installation tokens, its OAuth client exchanges the user's code; the install flow
    // needs the app's link (or slug). clientId/clientSecret are the client's here.
    secret: {
      keys: [{ key: 'appId' }, { key: 'privateKey', pem: true }, { key: 'appLink', or: 'appSlug' }, ...CLIENT_KEYS],
      why:
        "the App ID (appId), the App's private key in PEM (privateKey), its public link (appLink) and " +
        'the OAuth client ID and secret of its user authorization (clientId, clientSecret)',
    },
    clientBeforeConnect: false,
    accepts: [],
  },
  options: appInstallationOptions,
};
