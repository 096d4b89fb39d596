/**
 * APP: a code-host app installed on an account (a GitHub App). The end user installs it through the
 * Connect UI (src/modes/shared/app-install-flow.ts: only a new installation is accepted); an application
 * imports an existing installation by its ID. Installation tokens are minted from the app's keys (the
 * Integration's) and renewed ahead; sent as a bearer token.
 */
import { z } from 'zod';
import {
  appCredentialsOf,
  appSlugOfIntegration,
  appInstallationStrategy,
  getInstallation,
  installationUrlOf,
  requestInstallationToken,
} from '../shared/app-installation.js';
import { RefreshError } from '../../auth/refresh/errors.js';
import { fillProviderUrl } from '../../catalog/connection-config.js';
import { LatchkeyError } from '../../domain/errors.js';
import type { StoredCredentials } from '../../k8s/store.js';
import type { AuthModeModule, ImportInput, Imported, ModeDeps, NeededKey } from '../auth-mode.js';
import { appInstallFlow } from '../shared/app-install-flow.js';
import { notFlatImportable } from '../shared/flat-fields.js';
import { bearerInjection } from '../shared/injection.js';
import { appInstallationOptions } from '../shared/app-installation-options.js';
import { rawAnswer, shownTimestamp } from '../shared/credential-schemas.js';

/** The catalog's clientId/clientSecret fields are read as the App ID and key too. */
const APP_KEYS: NeededKey[] = [
  { key: 'appId', or: 'clientId' },
  { key: 'privateKey', or: 'clientSecret', pem: true },
];

const INSTALLATION_ID = /^[0-9]{1,20}$/;

/**
 * The installation (`credentials.installation_id` or `connection_config.installationId`) checked with
 * the provider as the app, and its first token minted, before anything is stored.
 */
async function appFromImport(deps: ModeDeps, input: ImportInput): Promise<Imported> {
  const { provider, integration } = input;
  const given = input.given.installation_id;
  const fromConfig = input.connectionConfig?.installationId;
  const installationId = (given as string | undefined) ?? (fromConfig === undefined ? undefined : String(fromConfig as string | number));
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
  const appSlug = input.connectionConfig?.appSlug ?? appSlugOfIntegration(deps.catalog, input.namespace, integration);
  const connectionConfig: Record<string, unknown> = { ...input.connectionConfig, installationId, ...(appSlug ? { appSlug } : {}) };
  let keys: { appId: string; privateKeyPem: string };
  try {
    keys = appCredentialsOf({ catalog: deps.catalog, namespace: input.namespace, integration });
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

export const app: AuthModeModule = {
  mode: 'APP',
  credentialSchemas: {
    import: z.strictObject({
      type: z.literal('APP'),
      installation_id: z
        .string()
        .regex(/^[0-9]{1,20}$/, 'must be the installation ID (digits)')
        .optional()
        .describe(
          "The installation of the Integration's app (or connection_config.installationId); checked with the provider and a token minted at once",
        ),
    }),
    shown: z.object({ type: z.literal('APP'), access_token: z.string(), expires_at: shownTimestamp.optional(), raw: rawAnswer }),
  },
  fromImport: appFromImport,
  fromFlatImport: (_deps, input) => notFlatImportable(input),
  connect: { flow: 'redirect', ...appInstallFlow() },
  refresh: appInstallationStrategy,
  refreshOnAppJwtRequest: true,
  proxy: bearerInjection('access_token'),
  providerProblems: (spec) => (spec.tokenUrl ? [] : ['APP providers need spec.tokenUrl']),
  integration: {
    secret: { keys: APP_KEYS, why: "the App ID (appId) and the App's private key in PEM (privateKey)" },
    clientBeforeConnect: false,
    shownAs: 'APP',
    accepts: ['APP'],
  },
  options: appInstallationOptions,
};
