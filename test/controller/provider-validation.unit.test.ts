/**
 * The Provider reconciler's own checks (src/controller/reconcilers/provider.ts) for what CEL refuses at
 * admission already: a Provider stored before a CRD rule existed, or applied with validation off, still
 * gets a Ready=False verdict that names the missing field. (The API server cannot store these, so the
 * check runs here on plain specs; test/controller/app-integration-conditions.test.ts covers the rest
 * against a real control plane.)
 */
import { validateProvider } from '../../src/controller/reconcilers/provider.js';
import type { ProviderSpec } from '../../src/k8s/resources.js';

const custom: ProviderSpec = {
  displayName: 'GitHub App OAuth',
  authMode: 'CUSTOM',
  authorizationUrl: 'https://github.example.test/apps/${connectionConfig.appSlug}/installations/new',
  tokenUrl: 'https://api.github.example.test/app/installations/${connectionConfig.installationId}/access_tokens',
  connectionConfiguration: [{ name: 'appSlug' }, { name: 'installationId', required: true }],
  appInstallation: {
    userTokenUrl: 'https://github.example.test/login/oauth/access_token',
    userInstallationsUrl: 'https://api.github.example.test/user/installations',
  },
};

describe('Provider validation', () => {
  it('accepts a complete CUSTOM provider whose placeholders are declared in the object form', () => {
    expect(validateProvider(custom)).toEqual([]);
  });

  it("names each URL a CUSTOM provider lacks (the install page, the token URL, the user authorization's two)", () => {
    const { authorizationUrl: _a, appInstallation: _i, ...rest } = custom;
    expect(validateProvider(rest)).toEqual([
      'CUSTOM providers need spec.authorizationUrl, spec.appInstallation.userTokenUrl, spec.appInstallation.userInstallationsUrl',
    ]);
    expect(validateProvider({ ...custom, appInstallation: { userTokenUrl: custom.appInstallation!.userTokenUrl } })).toEqual([
      'CUSTOM providers need spec.appInstallation.userInstallationsUrl',
    ]);
  });

  it('checks the app installation and plugin install URLs like the others', () => {
    const problems = validateProvider({
      ...custom,
      appInstallation: { ...custom.appInstallation, installationUrl: 'ftp://${connectionConfig.host}/installation' },
    });
    expect(problems).toEqual([
      'spec.appInstallation.installationUrl uses ${connectionConfig.host} but "host" is not listed in spec.connectionConfiguration',
      'spec.appInstallation.installationUrl must be an http(s) URL, not ftp:',
    ]);
    expect(
      validateProvider({
        displayName: 'Plugin',
        authMode: 'INSTALL_PLUGIN',
        pluginInstall: { installUrl: 'https://${connectionConfig.shop}.example.test/install', credentialParam: 'key' },
      }),
    ).toEqual(['spec.pluginInstall.installUrl uses ${connectionConfig.shop} but "shop" is not listed in spec.connectionConfiguration']);
    expect(validateProvider({ displayName: 'Plugin', authMode: 'INSTALL_PLUGIN' })).toEqual([
      'INSTALL_PLUGIN providers need spec.pluginInstall.installUrl and spec.pluginInstall.credentialParam',
    ]);
  });
});
