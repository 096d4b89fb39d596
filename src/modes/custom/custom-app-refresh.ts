/**
 * CUSTOM refresh: a new installation token from the app's keys every time (they live an hour), and
 * the user token renewed with its refresh token when it would lapse before the new installation token
 * does (GitHub user tokens live 8 hours). `expires_at` is the earlier of both expiries, so the
 * controller and fetches come back before either ends. The CUSTOM mode's strategy (src/modes/custom/mode.ts).
 */
import { fillProviderUrl } from '../../catalog/connection-config.js';
import type { CustomAppCredentials } from '../../domain/credentials.js';
import { appCredentialsOf, earlierOf, requestInstallationToken } from '../shared/app-installation.js';
import { refreshUserToken, type UserToken } from './app-user-tokens.js';
import { resolveClient } from '../../auth/oauth2-client.js';
import { RefreshError } from '../../auth/refresh/errors.js';
import type { RefreshStrategy } from '../../auth/refresh/strategies.js';

export const customAppStrategy: RefreshStrategy = {
  canRefresh: () => true,
  async refresh(input) {
    const current = input.connection.credentials as unknown as CustomAppCredentials;
    const spec = input.provider.spec;
    const config = input.connection.resource.spec.connectionConfig;
    if (!spec.tokenUrl)
      throw new RefreshError(`provider ${input.provider.metadata.name} has no tokenUrl`, {
        permanent: true,
        code: 'integration_misconfigured',
      });
    const minted = await requestInstallationToken({
      ...appCredentialsOf(input),
      tokenUrl: fillProviderUrl(spec, spec.tokenUrl, config),
      fetch: input.fetch,
      now: input.now,
      timeoutSeconds: input.timeoutSeconds,
    });
    let user: UserToken = current.user;
    const userExpiry = current.user?.expires_at ? Date.parse(current.user.expires_at) : undefined;
    const installationExpiry = minted.expiresAt ? Date.parse(minted.expiresAt) : input.now + 3600_000;
    if (userExpiry !== undefined && userExpiry <= installationExpiry) {
      const client = resolveClient(input.catalog, input.namespace, input.integration);
      const userTokenUrl = spec.appInstallation?.userTokenUrl;
      if (!client?.clientSecret || !userTokenUrl)
        throw new RefreshError(`integration ${input.integration.metadata.name} needs clientId and clientSecret to renew user tokens`, {
          permanent: true,
          code: 'integration_misconfigured',
        });
      if (!current.user.refresh_token)
        throw new RefreshError('reauthorization required: the user token expires and there is no refresh token', {
          permanent: true,
          code: 'reauthorization_required',
        });
      user = await refreshUserToken({
        tokenUrl: fillProviderUrl(spec, userTokenUrl, config),
        clientId: client.clientId,
        clientSecret: client.clientSecret,
        refreshToken: current.user.refresh_token,
        fetch: input.fetch,
        now: input.now,
        timeoutSeconds: input.timeoutSeconds,
      });
    }
    const next: Record<string, unknown> = {
      ...current,
      type: 'CUSTOM',
      access_token: minted.token,
      raw: minted.raw,
      user,
    };
    if (minted.expiresAt) next.installation_expires_at = minted.expiresAt;
    else delete next.installation_expires_at;
    const expiresAt = earlierOf(minted.expiresAt, user.expires_at);
    if (expiresAt) next.expires_at = expiresAt;
    else delete next.expires_at;
    return next as { type: string } & Record<string, unknown>;
  },
};
