/**
 * What the APP and CUSTOM suites run against: the Connect bed, the loopback fake GitHub
 * (servers/github-app-server.ts), three apps on it (one to install, one that requests user
 * authorization during installation, someone else's), and two Integrations: `github` (APP) and
 * `github-user` (CUSTOM). Plus the steps those suites repeat: REST with the secret key, the Connect UI
 * up to the fake's install page, and a whole install.
 */
import type { BrowserContext, Page } from 'playwright-core';
import type { ProviderSpec } from '../../src/k8s/resources.js';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { openConnectPopup, waitForEvent } from './browser.js';
import { startConnectBed, type ConnectBed } from './connect-bed.js';
import { sealSession } from './fixtures.js';
import { startGitHubAppServer, type FakeApp, type GitHubAppServer } from './servers/github-app-server.js';

/** A GitHub App Provider whose URLs all go to the fake at `origin`. */
export function githubAppProviderSpec(origin: string, mode: 'APP' | 'CUSTOM'): ProviderSpec {
  return {
    displayName: mode === 'APP' ? 'GitHub App' : 'GitHub App OAuth',
    authMode: mode,
    authorizationUrl: `${origin}/apps/\${connectionConfig.appSlug}/installations/new`,
    tokenUrl: `${origin}/app/installations/\${connectionConfig.installationId}/access_tokens`,
    connectionConfiguration: [
      { name: 'appSlug', pattern: '[A-Za-z0-9][A-Za-z0-9._~-]{0,254}', required: true },
      { name: 'installationId', pattern: '[0-9]{1,20}', required: true },
    ],
    appInstallation: {
      installationUrl: `${origin}/app/installations/\${connectionConfig.installationId}`,
      ...(mode === 'CUSTOM'
        ? { userTokenUrl: `${origin}/login/oauth/access_token`, userInstallationsUrl: `${origin}/user/installations` }
        : {}),
    },
    proxy: { baseUrl: origin },
  } as ProviderSpec;
}

export interface GitHubAppBed {
  bed: ConnectBed;
  gh: GitHubAppServer;
  /** The app the `github` (APP) Integration uses. */
  installApp: FakeApp;
  /** The app the `github-user` (CUSTOM) Integration uses ("request user authorization during installation"). */
  userApp: FakeApp;
  /** An app no Integration uses (its installations are someone else's). */
  otherApp: FakeApp;
  api(path: string, init?: RequestInit): Promise<{ status: number; body: Record<string, unknown> }>;
  /** `POST /connections` importing an installation into the APP Integration `github`. */
  importInstallation(connectionId: string, installationId: number): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Opens the Connect UI for one integration and waits for the fake's install page. */
  toInstallPage(context: BrowserContext, integration: string, endUser: string): Promise<{ page: Page; popup: Page }>;
  /** Submits the fake's install page for `login`. */
  install(popup: Page, login: string): Promise<void>;
  /** The whole flow in a fresh browser context; the new connection's ID once it is stored. */
  installConnection(integration: string, endUser: string, login: string): Promise<string>;
  close(): Promise<void>;
}

export async function startGitHubAppBed(prefix: string): Promise<GitHubAppBed> {
  const kc = testKubeConfig();
  const appProvider = `gh-app-${prefix}-${process.pid}`;
  const customProvider = `gh-app-oauth-${prefix}-${process.pid}`;
  const bed = await startConnectBed(kc, prefix, 'development');
  const { ns, env, latchkey, app, browser } = bed;
  const gh = await startGitHubAppServer();
  const callbackUrl = `${latchkey.url}/oauth/callback`;
  const installApp = gh.addApp({ slug: `latchkey-test-${process.pid}`, callbackUrl });
  const userApp = gh.addApp({ slug: `latchkey-user-${process.pid}`, callbackUrl, requestOAuthOnInstall: true });
  const otherApp = gh.addApp({ slug: `someone-else-${process.pid}`, callbackUrl });
  await applyProvider(kc, appProvider, githubAppProviderSpec(gh.origin, 'APP'));
  await applyProvider(kc, customProvider, githubAppProviderSpec(gh.origin, 'CUSTOM'));
  await createIntegration(
    kc,
    ns.name,
    'github',
    { provider: appProvider },
    { appId: installApp.id, privateKey: installApp.privateKeyPem, appLink: `${gh.origin}/apps/${installApp.slug}` },
  );
  await createIntegration(
    kc,
    ns.name,
    'github-user',
    { provider: customProvider },
    {
      appId: userApp.id,
      privateKey: userApp.privateKeyPem,
      appLink: `${gh.origin}/apps/${userApp.slug}`,
      clientId: userApp.clientId,
      clientSecret: userApp.clientSecret,
    },
  );
  await bed.synced(
    (store) =>
      store.catalog.getProvider(appProvider) &&
      store.catalog.getProvider(customProvider) &&
      store.catalog.getIntegration(ns.name, 'github-user') &&
      store.catalog.readSecretValue(ns.name, 'github-client', 'appLink') &&
      store.catalog.readSecretValue(ns.name, 'github-user-client', 'clientSecret'),
  );

  const api: GitHubAppBed['api'] = async (path, init = {}) => {
    const res = await fetch(`${latchkey.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${env.secretKey}`, 'content-type': 'application/json', ...(init.headers ?? {}) },
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const toInstallPage: GitHubAppBed['toInstallPage'] = async (context, integration, endUser) => {
    const token = sealSession(env.secretKey, { namespace: ns.name, endUser: { id: endUser }, allowedIntegrations: [integration] });
    const { app: page, popup } = await openConnectPopup(context, app.url, token);
    await popup.waitForURL((u) => u.href.startsWith(`${gh.origin}/apps/`), { timeout: 30_000 });
    return { page, popup };
  };
  const install: GitHubAppBed['install'] = async (popup, login) => {
    await popup.fill('input[name=login]', login);
    await popup.click('button[type=submit]');
  };

  return {
    bed,
    gh,
    installApp,
    userApp,
    otherApp,
    api,
    importInstallation(connectionId, installationId) {
      return api('/connections', {
        method: 'POST',
        body: JSON.stringify({
          provider_config_key: 'github',
          connection_id: connectionId,
          credentials: { type: 'APP', installation_id: String(installationId) },
        }),
      });
    },
    toInstallPage,
    install,
    async installConnection(integration, endUser, login) {
      const context = await browser.newContext();
      const { page, popup } = await toInstallPage(context, integration, endUser);
      await install(popup, login);
      const connectionId = (await waitForEvent(page, 'connect', 30_000)).connectionId!;
      await context.close();
      await eventually(() => latchkey.ctx.connections.getConnection(ns.name, integration, connectionId));
      return connectionId;
    },
    async close() {
      await gh.close();
      await deleteProvider(kc, appProvider);
      await deleteProvider(kc, customProvider);
      await bed.close();
    },
  };
}
