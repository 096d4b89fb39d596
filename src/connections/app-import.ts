/**
 * Import of an APP connection (an existing installation of the Integration's app): the application
 * sends the installation ID (`credentials.installation_id` or `connection_config.installationId`);
 * the app's key is the Integration's. Before anything is stored, the provider is asked as the app
 * whether the installation is this app's, and the first installation token is minted.
 */
import { appCredentialsOf, getInstallation, installationUrlOf, requestInstallationToken } from '../auth/app-installation.js';
import { RefreshError } from '../auth/refresh/errors.js';
import { fillProviderUrl } from '../catalog/connection-config.js';
import { LatchkeyError } from '../domain/errors.js';
import type { IntegrationResource, ProviderResource } from '../k8s/resources.js';
import type { KubeStore, StoredCredentials } from '../k8s/store.js';

const INSTALLATION_ID = /^[0-9]{1,20}$/;

/** The app slug from the Integration's Secret (`appSlug`, or the last path segment of `appLink`), if any. */
export function appSlugOfIntegration(store: KubeStore, namespace: string, integration: IntegrationResource): string | undefined {
  const ref = integration.spec.clientSecretRef?.name;
  const read = (key: string) => (ref ? store.readSecretValue(namespace, ref, key) : undefined) || undefined;
  const slug = read('appSlug');
  if (slug) return slug;
  const link = read('appLink');
  if (!link) return undefined;
  try {
    return new URL(link).pathname.split('/').filter(Boolean).pop();
  } catch {
    return undefined;
  }
}

export async function appFromImport(
  deps: { store: KubeStore; fetch: typeof fetch; clock: { now(): number } },
  input: {
    namespace: string;
    integration: IntegrationResource;
    provider: ProviderResource;
    installationId?: string;
    connectionConfig?: Record<string, unknown>;
  },
): Promise<{ credentials: StoredCredentials; connectionConfig: Record<string, unknown> }> {
  const { provider, integration } = input;
  const fromConfig = input.connectionConfig?.installationId;
  const installationId = input.installationId ?? (fromConfig === undefined ? undefined : String(fromConfig as string | number));
  if (!installationId || !INSTALLATION_ID.test(installationId)) {
    throw new LatchkeyError('invalid_input', 'missing_credentials', 'APP import needs the installation ID (digits)', {
      errors: [
        { path: 'body.credentials.installation_id', message: 'required: the installation ID (digits)', code: 'missing_credentials' },
      ],
    });
  }
  if (fromConfig !== undefined && String(fromConfig as string | number) !== installationId) {
    throw new LatchkeyError(
      'invalid_input',
      'invalid_connection_config',
      'connection_config.installationId differs from credentials.installation_id',
      {
        errors: [{ path: 'body.connection_config.installationId', message: 'differs from credentials.installation_id' }],
      },
    );
  }
  const appSlug = input.connectionConfig?.appSlug ?? appSlugOfIntegration(deps.store, input.namespace, integration);
  const connectionConfig: Record<string, unknown> = { ...input.connectionConfig, installationId, ...(appSlug ? { appSlug } : {}) };
  let keys: { appId: string; privateKeyPem: string };
  try {
    keys = appCredentialsOf({ store: deps.store, namespace: input.namespace, integration });
  } catch {
    throw new LatchkeyError(
      'unavailable',
      'integration_misconfigured',
      `integration ${integration.metadata.name} needs a Secret with appId and privateKey`,
    );
  }
  const fill = (template: string) => fillProviderUrl(provider.spec, template, connectionConfig);
  const installationUrl = installationUrlOf(provider.spec, fill);
  if (!installationUrl || !provider.spec.tokenUrl)
    throw new LatchkeyError('unavailable', 'integration_misconfigured', `provider ${provider.metadata.name} has no installation URLs`);
  const common = { ...keys, fetch: deps.fetch, now: deps.clock.now() };
  try {
    const installation = await getInstallation({ ...common, installationUrl });
    if (!installation || installation.appId !== keys.appId) {
      throw new LatchkeyError(
        'invalid_input',
        'installation_not_found',
        `The provider does not know installation ${installationId} for this app`,
        {
          errors: [
            { path: 'body.credentials.installation_id', message: 'not an installation of this app', code: 'installation_not_found' },
          ],
        },
      );
    }
    const minted = await requestInstallationToken({ ...common, tokenUrl: fill(provider.spec.tokenUrl) });
    const credentials: StoredCredentials = { type: 'APP', access_token: minted.token, raw: minted.raw };
    if (minted.expiresAt) credentials.expires_at = minted.expiresAt;
    return { credentials, connectionConfig };
  } catch (err) {
    if (!(err instanceof RefreshError)) throw err;
    if (err.code === 'integration_misconfigured') throw new LatchkeyError('unavailable', 'integration_misconfigured', err.message);
    if (err.permanent)
      throw new LatchkeyError('invalid_input', 'installation_refused', 'The provider refused an installation token for this installation');
    throw new LatchkeyError('upstream', 'provider_unavailable', 'The provider could not be reached to check the installation; try again');
  }
}
