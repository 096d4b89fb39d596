/**
 * Credentials only usable once turned into a token — TWO_STEP (exchanged at the provider's token
 * endpoint), BILL (a Bill.com session), APP_STORE (a minted ES256 token) — are turned at import and in
 * the Connect form before anything is stored: a refusal is a 400 naming the field, an unreachable
 * provider a 502, and nothing is written either way.
 */
import { CredentialExchangeError, exchangeInputError, type ExchangeCall } from './credential-exchange.js';
import { LatchkeyError } from '../../domain/errors.js';
import type { ProviderResource } from '../../k8s/resources.js';
import type { StoredCredentials } from '../../k8s/store.js';
import type { AuthMode } from '../../domain/auth-modes.js';
import type { FormInput, FormOutcome, GivenCredentials, Imported, ImportInput, ModeDeps } from '../auth-mode.js';

/** Seconds an exchange at import or in the form may take (the end user or the application is waiting). */
export const EXCHANGE_TIMEOUT_SECONDS = 10;

/** A mode's exchange: the given credentials checked (a 400 naming the fields under `path`) and turned at the provider. */
export type Exchange = (call: ExchangeCall, given: GivenCredentials, path: string) => Promise<StoredCredentials>;

/** Runs an exchange now; a failed one becomes the 4xx/5xx the caller answers (`path`: where the credentials were sent). */
export async function exchangeNow(
  deps: ModeDeps,
  provider: ProviderResource,
  given: GivenCredentials,
  connectionConfig: Record<string, unknown>,
  path: string,
  exchange: Exchange,
): Promise<StoredCredentials> {
  const call = { provider, connectionConfig, fetch: deps.fetch, timeoutSeconds: EXCHANGE_TIMEOUT_SECONDS, now: deps.clock.now() };
  try {
    return await exchange(call, given, path);
  } catch (err) {
    if (err instanceof CredentialExchangeError) throw exchangeInputError(err, provider.spec.displayName, path);
    throw err;
  }
}

/** An import whose credentials are exchanged before anything is stored. */
export const importByExchange =
  (exchange: Exchange) =>
  async (deps: ModeDeps, input: ImportInput): Promise<Imported> => ({
    credentials: await exchangeNow(deps, input.provider, input.given, importConfig(input), 'body.credentials', exchange),
  });

/** A form whose values are exchanged before anything is stored: the provider's refusal is a failed attempt. */
export const formByExchange =
  (type: AuthMode, exchange: Exchange) =>
  (deps: ModeDeps, form: FormInput): Promise<FormOutcome> =>
    formOutcomeOf(() => exchangeNow(deps, form.provider, { ...form.values, type }, form.connectionConfig, 'values', exchange));

/** A form's credentials: what the provider refused (or what was refused for it) is a failed attempt the Connect flow logs. */
export async function formOutcomeOf(run: () => Promise<StoredCredentials>): Promise<FormOutcome> {
  try {
    return { credentials: await run() };
  } catch (err) {
    if (err instanceof LatchkeyError) return { refused: err };
    throw err;
  }
}

/** The configuration an import's exchange or minting uses: the re-imported connection's, under the body's. */
export function importConfig(input: Pick<ImportInput, 'connectionConfig' | 'keptConfig'>): Record<string, unknown> {
  return { ...input.keptConfig, ...input.connectionConfig };
}
