/**
 * JWT: a signing key from which tokens are minted here (the Provider's `modeOptions` say how): at
 * import and in the form at once (a key that cannot sign is a 400), and again when a fetch or proxied
 * call finds the token about to expire (never on the controller's schedule: minting is local).
 */
import { z } from 'zod';
import { JwtMintError, jwtMintingStrategy, mintJwtCredentials } from '../shared/jwt-minting.js';
import { LatchkeyError } from '../../domain/errors.js';
import type { StoredCredentials } from '../../k8s/store.js';
import type { AuthModeModule } from '../auth-mode.js';
import { importConfig } from '../shared/exchange.js';
import { notFlatImportable } from '../shared/flat-fields.js';
import { bearerInjection } from '../shared/injection.js';
import { jwtOptions } from './options.js';
import { shownTimestamp } from '../shared/credential-schemas.js';

const ALGORITHM = /^(HS|RS|ES|PS)(256|384|512)$/;

export const jwt: AuthModeModule = {
  mode: 'JWT',
  credentialSchemas: {
    import: z.strictObject({
      type: z.literal('JWT'),
      apiKey: z
        .string()
        .min(1)
        .max(16_384)
        .describe(
          "The signing key (the provider's `fieldLabels.apiKey` says which); a token is minted from it at once, and a key that cannot sign is a 400",
        ),
    }),
    shown: z.object({
      type: z.literal('JWT'),
      apiKey: z.string().describe('The signing key'),
      token: z.string().describe('A JWT minted from the key, valid until expires_at (a fresh one is minted before it expires)'),
      expires_at: shownTimestamp,
    }),
  },
  // The token's claims may use the configuration kept by a connection being re-imported.
  fromImport(deps, input) {
    const { provider } = input;
    const apiKey = input.given.apiKey as string;
    try {
      const credentials = mintJwtCredentials({
        modeOptions: provider.spec.modeOptions,
        apiKey,
        connectionConfig: importConfig(input),
        now: deps.clock.now(),
        provider: `provider "${provider.metadata.name}"`,
      }) as unknown as StoredCredentials;
      return Promise.resolve({ credentials });
    } catch (err) {
      if (!(err instanceof JwtMintError)) throw err;
      if (err.problem === 'invalid_key') {
        throw new LatchkeyError(
          'invalid_input',
          'invalid_credentials',
          `credentials.apiKey cannot sign ${provider.metadata.name} tokens: ${err.message}`,
          { errors: [{ path: 'body.credentials.apiKey', message: err.message, code: 'invalid_credentials' }] },
        );
      }
      if (err.problem === 'missing_connection_config') {
        throw new LatchkeyError('invalid_input', 'missing_connection_config', `${err.message}; pass it in connection_config`, {
          errors: err.keys.map((k) => ({ path: `body.connection_config.${k}`, message: 'required', code: 'missing_connection_config' })),
        });
      }
      throw new LatchkeyError('unavailable', 'integration_misconfigured', err.message);
    }
  },
  fromFlatImport: (_deps, input) => notFlatImportable(input),
  connect: {
    flow: 'form',
    // The signing key; the key ID, issuer and the like are the provider's connection configuration.
    fields: () => [{ name: 'apiKey', secret: true, required: true }],
    // A key that cannot sign the provider's token is a form error (not the provider's refusal); nothing is stored.
    credentials(deps, form) {
      const name = form.provider.spec.displayName;
      try {
        const credentials = mintJwtCredentials({
          modeOptions: form.provider.spec.modeOptions,
          apiKey: form.values.apiKey!,
          connectionConfig: form.connectionConfig,
          now: deps.clock.now(),
          provider: name,
        }) as unknown as StoredCredentials;
        return Promise.resolve({ credentials });
      } catch (err) {
        if (!(err instanceof JwtMintError)) throw err;
        if (err.problem === 'invalid_key') {
          throw new LatchkeyError('invalid_input', 'invalid_credentials', `${form.label('apiKey')}: ${err.message}`, {
            errors: [{ path: 'values.apiKey', message: err.message }],
          });
        }
        if (err.problem === 'missing_connection_config') throw new LatchkeyError('invalid_input', 'invalid_input', err.message);
        throw new LatchkeyError(
          'unavailable',
          'integration_not_configured',
          `${name} is not fully configured yet (its token settings are not usable).`,
        );
      }
    },
  },
  refresh: jwtMintingStrategy,
  proxy: bearerInjection('token'),
  providerProblems(spec) {
    const alg = (spec.modeOptions as { algorithm?: unknown } | undefined)?.algorithm;
    return typeof alg === 'string' && ALGORITHM.test(alg)
      ? []
      : ['JWT providers need spec.modeOptions.algorithm (for example ES256 or HS256)'];
  },
  integration: { clientBeforeConnect: false, accepts: [] },
  options: jwtOptions,
};
