/**
 * The app installation flows of the Connect UI: APP (a code-host app installed on an account, e.g. a
 * GitHub App) and CUSTOM (the same with user authorization during installation). The browser goes to
 * the Provider's install page (`authorizationUrl`, with the app slug from the Integration and our
 * sealed, browser-bound flow state as `state`); the provider sends it back to the OAuth callback with
 * `installation_id`, `setup_action` and `state` (and `code` for CUSTOM). The callback (flows.ts checks
 * the state, the browser and single use first) then proves the installation is the end user's and
 * mints the first installation token before anything is stored.
 *
 * Proof of the installation (an `installation_id` in a URL can be typed by anyone):
 * - always: the provider, asked as the app (app JWT), knows the installation and says it is this app's;
 * - APP: only a new installation (`setup_action=install`, created after the flow started) is accepted;
 *   GitHub gives no proof that an existing installation belongs to whoever is in the browser;
 * - CUSTOM: the user token from `code` must see the installation among the user's installations.
 */
import {
  appCredentialsOf,
  appSlugOfIntegration,
  APP_SUPPLIED_KEYS,
  earlierOf,
  getInstallation,
  installationUrlOf,
  requestInstallationToken,
} from './app-installation.js';
import { sealFlowState, type FlowState } from '../../auth/flow-state.js';
import { RefreshError } from '../../auth/refresh/errors.js';
import { checkConnectionConfig, fillProviderUrl } from '../../catalog/connection-config.js';
import { LatchkeyError } from '../../domain/errors.js';
import type { IntegrationResource, ProviderResource } from '../../k8s/resources.js';
import type { CatalogStore, StoredCredentials } from '../../k8s/store.js';
import type { ModeDeps, RedirectCallback, RedirectDeps, RedirectFlow } from '../auth-mode.js';
import { installUserConfig, userFacingSpec } from './install-config.js';

/** CUSTOM's part of the flow: the user authorizes during the installation, which proves the installation is theirs. */
export interface UserAuthorization {
  /** The client that exchanges the user's code is set (checked before the install page). */
  clientReady(store: CatalogStore, namespace: string, integration: IntegrationResource): boolean;
  /** The user's token for the callback's `code`, checked to reach the installation; a refusal is thrown. */
  authorize(deps: ModeDeps, input: UserAuthorizationInput): Promise<UserTokenAnswer>;
}

/** What the user authorization is given at the callback. */
export interface UserAuthorizationInput {
  state: FlowState;
  query: URLSearchParams;
  integration: IntegrationResource;
  provider: ProviderResource;
  name: string;
  installationId: string;
  /** Fills the Provider's URL templates with the connection's configuration. */
  fill: (template: string) => string;
}

/** The user's token as stored beside the installation's (`credentials.user`), and when it lapses. */
export interface UserTokenAnswer {
  expires_at?: string;
}

/** What an app slug may be: it goes into the install page's URL. */
const SLUG = /^[A-Za-z0-9][A-Za-z0-9._~-]{0,254}$/;

const CLOCK_SKEW_MS = 60_000;

export function notConfigured(what: string): LatchkeyError {
  return new LatchkeyError('unavailable', 'integration_not_configured', `This integration is not fully configured yet (${what}).`);
}

/** The app slug from the Integration's Secret, checked for the install page's URL. */
function appSlugOf(deps: Pick<ModeDeps, 'catalog'>, namespace: string, integration: IntegrationResource): string {
  const slug = appSlugOfIntegration(deps.catalog, namespace, integration);
  if (!slug || !SLUG.test(slug)) throw notConfigured('the app link or slug is missing');
  return slug;
}

export const refused = (code: string, message: string) => new LatchkeyError('invalid_input', code, message);

/**
 * What the provider's failure means for the end user: 502 when it failed, 400 when it refused. Any
 * other error (this flow's own refusals) is thrown as it is.
 */
export function fromRefresh(err: unknown, name: string): never {
  if (err instanceof RefreshError) {
    if (err.code === 'integration_misconfigured') throw notConfigured('the app key is not usable');
    if (err.permanent) throw refused('installation_refused', `${name} did not accept this installation.`);
    throw new LatchkeyError(
      'upstream',
      'provider_unavailable',
      `${name} could not be reached to complete the installation. Please try again.`,
    );
  }
  throw err;
}

/** The install flow of APP (only a new installation is accepted) or, with `user`, of CUSTOM. */
export function appInstallFlow(user?: UserAuthorization): RedirectFlow {
  return {
    /** Starts the install flow: the install page URL with the sealed state. */
    async start(deps, input) {
      const { integration, provider, base } = input;
      const mode = provider.spec.authMode;
      const supplied = APP_SUPPLIED_KEYS;
      try {
        appCredentialsOf({ catalog: deps.catalog, namespace: base.namespace, integration });
      } catch {
        throw notConfigured('the App ID or private key is missing');
      }
      if (user && !user.clientReady(deps.catalog, base.namespace, integration)) throw notConfigured('its client ID and secret are missing');
      const appSlug = appSlugOf(deps, base.namespace, integration);
      const userConfig = await installUserConfig(deps, input, provider.spec, supplied);
      const state = sealFlowState({ ...base, mode, connectionConfig: userConfig, startedAt: deps.clock.now() }, input.secretKey);
      const url = new URL(
        fillProviderUrl(userFacingSpec(provider.spec, supplied), provider.spec.authorizationUrl!, { ...userConfig, appSlug }),
      );
      url.searchParams.set('state', state);
      return { url: url.href, to: 'install the app' };
    },
    complete: (deps, input) => completeAppInstall(deps, input, user),
    suppliedKeys: () => APP_SUPPLIED_KEYS,
  };
}

/**
 * The callback of an install flow whose state, browser binding and single use src/connect/flows.ts has
 * checked: proves the installation, mints its first token (and for CUSTOM the user token) and returns
 * the credentials with the connection configuration to store. Throws a 4xx LatchkeyError for anything
 * forged or refused; nothing is stored then.
 */
async function completeAppInstall(
  deps: RedirectDeps,
  input: RedirectCallback,
  user: UserAuthorization | undefined,
): Promise<{ credentials: StoredCredentials; connectionConfig: Record<string, string> }> {
  const { state, integration, provider, name } = input;
  const q = input.url.searchParams;
  const mode = state.mode;
  const setupAction = q.get('setup_action');
  if (setupAction === 'request') {
    throw refused(
      'installation_pending',
      `The installation of ${name} waits for an owner of the account to approve it. Connect again once it is approved.`,
    );
  }
  const installationId = q.get('installation_id') ?? '';
  if (!/^[0-9]{1,20}$/.test(installationId))
    throw refused('invalid_callback', `${name} did not send a valid installation ID. Please start again.`);
  const appSlug = appSlugOf(deps, state.namespace, integration);
  const r = state.reconnect;
  if (r) {
    const kept = (await deps.connections.findConnection(state.namespace, r.integration, r.connectionId))?.resource.spec.connectionConfig;
    if (kept?.installationId !== undefined && String(kept.installationId) !== installationId)
      throw refused('installation_changed', 'A reconnect keeps the installation; connect the other installation as a new connection.');
  }
  const connectionConfig = Object.fromEntries(
    Object.entries(
      checkConnectionConfig(provider.spec, { ...state.connectionConfig, appSlug, installationId }, { path: 'connectionConfig' }),
    )
      .filter(([, v]) => typeof v === 'string')
      .map(([k, v]) => [k, v as string]),
  );
  let keys: { appId: string; privateKeyPem: string };
  try {
    keys = appCredentialsOf({ catalog: deps.catalog, namespace: state.namespace, integration });
  } catch {
    throw notConfigured('the App ID or private key is missing');
  }
  const fill = (template: string) => fillProviderUrl(provider.spec, template, connectionConfig);
  const common = { fetch: deps.fetch, now: deps.clock.now() };

  // The user token first (CUSTOM): the code is single use and proves who is in the browser.
  const userToken = user ? await user.authorize(deps, { state, query: q, integration, provider, name, installationId, fill }) : undefined;

  const installationUrl = installationUrlOf(provider.spec, fill);
  if (!installationUrl || !provider.spec.tokenUrl) throw notConfigured('the Provider has no installation URLs');
  let minted: Awaited<ReturnType<typeof requestInstallationToken>>;
  try {
    const installation = await getInstallation({ ...keys, ...common, installationUrl });
    if (!installation || installation.appId !== keys.appId)
      throw refused('installation_not_found', `${name} does not know this installation for this app.`);
    if (!user) {
      // APP: no proof whose the installation is but that it was made in this flow.
      if (setupAction !== 'install')
        throw refused(
          'installation_not_new',
          `Only a new installation of ${name} can be connected here (the app was already installed on that account). Ask the application to connect it.`,
        );
      const created = installation.createdAt ? Date.parse(installation.createdAt) : NaN;
      if (!Number.isFinite(created) || created < (state.startedAt ?? Infinity) - CLOCK_SKEW_MS)
        throw refused('installation_not_new', `This ${name} installation was not made in this connect flow.`);
    }
    minted = await requestInstallationToken({ ...keys, ...common, tokenUrl: fill(provider.spec.tokenUrl) });
  } catch (err) {
    fromRefresh(err, name);
  }
  const credentials: Record<string, unknown> = { type: mode, access_token: minted.token, raw: minted.raw };
  if (!userToken) {
    if (minted.expiresAt) credentials.expires_at = minted.expiresAt;
  } else {
    credentials.user = userToken;
    if (minted.expiresAt) credentials.installation_expires_at = minted.expiresAt;
    const expiresAt = earlierOf(minted.expiresAt, userToken.expires_at);
    if (expiresAt) credentials.expires_at = expiresAt;
  }
  return { credentials: credentials as StoredCredentials, connectionConfig };
}
