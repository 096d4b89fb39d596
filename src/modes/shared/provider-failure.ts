/**
 * A provider's failure in a redirect flow's handshake (OAuth 2's code exchange, OAuth 1.0a's steps):
 * logged with the provider's answer and answered as the flow's 502, never passed on as it is.
 */
import { EgressRefusedError } from '../../egress/guard.js';
import { LatchkeyError } from '../../domain/errors.js';
import { providerAnswer } from '../../oplog/redact.js';
import { OAUTH1_FAILED } from './oauth1.js';

/** The provider's failure (or the egress policy's refusal of its URL), as opposed to the flow's own refusals. */
export const isProviderFailure = (err: LatchkeyError): boolean => err.code === OAUTH1_FAILED || err instanceof EgressRefusedError;

/** What a start's steps at the provider threw: the Connect flow passes the flow's own refusals among them on and answers the rest as its 502. */
const providerStepErrors = new WeakSet<object>();

/** Runs a start's steps at the provider, marking what they throw (see {@link failedAtProvider}). */
export async function atProvider<T>(steps: () => Promise<T>): Promise<T> {
  try {
    return await steps();
  } catch (err) {
    const thrown = typeof err === 'object' && err !== null ? err : new Error(String(err));
    providerStepErrors.add(thrown);
    throw thrown;
  }
}

/** Whether a redirect flow's start threw this in its steps at the provider (else before them: configuration, client). */
export const failedAtProvider = (err: unknown): boolean => typeof err === 'object' && err !== null && providerStepErrors.has(err);

/** The token exchange failed at the provider; `answer` is its words, redacted (for the log, never the page). */
export class TokenExchangeFailed extends LatchkeyError {
  constructor(
    name: string,
    readonly answer: string,
  ) {
    super('upstream', 'token_exchange_failed', `${name} did not complete the authorization. Please try again.`);
  }
}

/** Runs a token exchange: the provider's failure becomes `TokenExchangeFailed` (`secrets` kept out of its answer). */
export async function exchangeAtProvider<T>(name: string, secrets: Array<string | undefined>, exchange: () => Promise<T>): Promise<T> {
  try {
    return await exchange();
  } catch (err) {
    if (err instanceof LatchkeyError && !isProviderFailure(err)) throw err;
    throw new TokenExchangeFailed(name, providerAnswer(err, secrets));
  }
}
