/**
 * Credentials that are only usable once turned into a token — TWO_STEP (exchanged at the provider's
 * token endpoint), BILL (a Bill.com session) and APP_STORE (a minted ES256 token) — checked and turned
 * at import and in the Connect UI form, before anything is stored: a refusal is a 400 naming the
 * field, an unreachable provider a 502, and nothing is written either way.
 */
import { appStoreFromInput } from '../auth/app-store-token.js';
import { billLogin, checkBillSignIn } from '../auth/bill-session.js';
import { CredentialExchangeError, exchangeInputError } from '../auth/credential-exchange.js';
import { checkTwoStepFields, exchangeTwoStep } from '../auth/two-step.js';
import type { ProviderResource } from '../k8s/resources.js';
import type { StoredCredentials } from '../k8s/store.js';

/** The modes whose given credentials are exchanged or minted before they are stored. */
export const EXCHANGED_MODES = new Set(['TWO_STEP', 'BILL', 'APP_STORE']);

/** Seconds an exchange at import may take (the end user or the application is waiting). */
const EXCHANGE_TIMEOUT_SECONDS = 10;

export interface ExchangeDeps {
  fetch: typeof fetch;
  clock: { now(): number };
}

/**
 * The credentials to store for `given` (the import body's credentials or the form's values, with
 * `type`), or `given` unchanged for other modes. `path` names where they were sent, for errors.
 */
export async function exchangeGivenCredentials(
  deps: ExchangeDeps,
  provider: ProviderResource,
  given: StoredCredentials,
  connectionConfig: Record<string, unknown> | undefined,
  path: string,
): Promise<StoredCredentials> {
  const now = deps.clock.now();
  const name = provider.spec.displayName;
  try {
    switch (given.type) {
      case 'TWO_STEP':
        return await exchangeTwoStep({
          provider,
          fields: checkTwoStepFields(provider.spec, given, path),
          connectionConfig,
          fetch: deps.fetch,
          timeoutSeconds: EXCHANGE_TIMEOUT_SECONDS,
          now,
        });
      case 'BILL':
        return await billLogin({
          provider,
          signIn: checkBillSignIn(given, path),
          connectionConfig,
          fetch: deps.fetch,
          timeoutSeconds: EXCHANGE_TIMEOUT_SECONDS,
          now,
        });
      case 'APP_STORE':
        return appStoreFromInput(given, provider.spec, now, path);
      default:
        return given;
    }
  } catch (err) {
    if (err instanceof CredentialExchangeError) throw exchangeInputError(err, name, path);
    throw err;
  }
}
