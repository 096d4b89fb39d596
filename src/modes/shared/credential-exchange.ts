/**
 * One HTTP call that trades stored credentials for a short-lived token or session (TWO_STEP's token
 * endpoint, Bill.com's login), and what its answer means: a JSON body, or a classified
 * {@link CredentialExchangeError}. Shared by the modes that sign in with stored secrets, so they
 * classify a refusal the same way. The request and answer bodies never appear in an error message:
 * both may carry the very secrets exchanged (a provider may echo the user name or the password).
 */
import { isRetryableStatus, parseRetryAfter } from '../../domain/retry.js';
import { RefreshError } from '../../auth/refresh/errors.js';
import { LatchkeyError, findAnswerTooLarge, isAbortOrTimeout } from '../../domain/errors.js';
import { ProblemError, type ProblemAnswers } from './problem-error.js';
import { readAnswerText } from '../../egress/bounded-body.js';
import type { ProviderResource } from '../../k8s/resources.js';
import type { StoredCredentials } from '../../k8s/store.js';
import type { StrategyInput } from '../../auth/refresh/strategies.js';

/**
 * `rejected`: the provider refused these credentials (400, 401, 403, 422) — the end user must give
 * new ones; `unavailable`: try again later (network, timeout, 429, 5xx); `misconfigured`: the
 * Provider's description does not fit what the endpoint does (404, 405, 415, no token in the answer).
 */
export type ExchangeProblem = 'rejected' | 'unavailable' | 'misconfigured';

/** Each problem's kind and code: as {@link exchangeInputError} answers it at import and in the form. */
const EXCHANGE_PROBLEMS: ProblemAnswers<ExchangeProblem> = {
  rejected: { kind: 'invalid_input', code: 'invalid_credentials' },
  unavailable: { kind: 'upstream', code: 'provider_unavailable' },
  misconfigured: { kind: 'unavailable', code: 'integration_misconfigured' },
};

export class CredentialExchangeError extends ProblemError<ExchangeProblem> {
  constructor(
    problem: ExchangeProblem,
    message: string,
    readonly status?: number,
    retryAfterMs?: number,
  ) {
    super(problem, EXCHANGE_PROBLEMS, message, { retryAfterMs });
    this.name = 'CredentialExchangeError';
  }
}

/** What an exchange with a provider takes besides the credentials (TWO_STEP, BILL). */
export interface ExchangeCall {
  provider: ProviderResource;
  connectionConfig: Record<string, unknown> | undefined;
  fetch: typeof fetch;
  timeoutSeconds: number;
  now: number;
}

const REJECTING_STATUSES = new Set([400, 401, 403, 422]);

export interface ExchangeRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  fetch: typeof fetch;
  timeoutSeconds: number;
  now: number;
  /** For messages: "Bill.com's login", "the token endpoint". */
  what: string;
}

/** POSTs the request and returns the JSON object answered; throws {@link CredentialExchangeError}. */
export async function postForJson(req: ExchangeRequest): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await req.fetch(req.url, {
      method: 'POST',
      headers: { accept: 'application/json', ...req.headers },
      body: req.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(req.timeoutSeconds * 1000),
    });
  } catch (err) {
    const detail = isAbortOrTimeout(err) ? 'timed out' : `failed (${(err as Error).message.slice(0, 200)})`;
    throw new CredentialExchangeError('unavailable', `${req.what} ${detail}`);
  }
  // Bounded: an answer past the limit fails the exchange with provider_answer_too_large; other read errors leave it empty.
  const text = await readAnswerText(res).catch((err: unknown) => {
    const tooLarge = findAnswerTooLarge(err);
    if (tooLarge) throw tooLarge;
    return '';
  });
  if (res.status === 429 || isRetryableStatus(res.status) || res.status >= 500) {
    throw new CredentialExchangeError(
      'unavailable',
      `${req.what} answered ${res.status}`,
      res.status,
      parseRetryAfter(res.headers.get('retry-after'), req.now),
    );
  }
  if (REJECTING_STATUSES.has(res.status)) {
    throw new CredentialExchangeError('rejected', `${req.what} refused the credentials (HTTP ${res.status})`, res.status);
  }
  if (res.status < 200 || res.status >= 300) {
    throw new CredentialExchangeError('misconfigured', `${req.what} answered HTTP ${res.status}`, res.status);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CredentialExchangeError('misconfigured', `${req.what} did not answer JSON`, res.status);
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) {
    throw new CredentialExchangeError('misconfigured', `${req.what} did not answer a JSON object`, res.status);
  }
  return json as Record<string, unknown>;
}

/** A failed exchange as the refresher records it on the connection (or, misconfigured, on the Integration). */
export function exchangeRefreshError(err: CredentialExchangeError): RefreshError {
  const providerError = err.status !== undefined ? { status: err.status } : undefined;
  if (err.problem === 'rejected') {
    return new RefreshError(`${err.message}; the end user must give new credentials`, {
      permanent: true,
      code: 'reauthorization_required',
      providerError,
    });
  }
  if (err.problem === 'unavailable') {
    return new RefreshError(`provider unavailable: ${err.message}`, {
      permanent: false,
      code: 'provider_unavailable',
      retryAfterMs: err.retryAfterMs,
      providerError,
    });
  }
  return new RefreshError(err.message, { permanent: true, code: 'integration_misconfigured', providerError });
}

/**
 * A renewal by exchange (TWO_STEP, BILL) with the connection's stored configuration, its failure as
 * the refresher classifies it: the exchange's own failure, the provider's oversized answer as it is
 * (its fault, not the stored sign-in's), and a refusal of the stored credentials as needing the end
 * user again.
 */
export async function renewByExchange(
  input: StrategyInput,
  run: (call: ExchangeCall) => Promise<StoredCredentials>,
): Promise<StoredCredentials> {
  try {
    return await run({
      provider: input.provider,
      connectionConfig: input.connection.resource.spec.connectionConfig,
      fetch: input.fetch,
      timeoutSeconds: input.timeoutSeconds,
      now: input.now,
    });
  } catch (err) {
    if (err instanceof CredentialExchangeError) throw exchangeRefreshError(err);
    // Already classified (a RefreshError is a LatchkeyError too: it must not become "the end user again").
    if (err instanceof RefreshError || findAnswerTooLarge(err)) throw err;
    if (err instanceof LatchkeyError) throw new RefreshError(err.message, { permanent: true, code: 'reauthorization_required' });
    throw err;
  }
}

/** A failed exchange at import or in the Connect UI form: nothing is stored. */
export function exchangeInputError(err: CredentialExchangeError, provider: string, path: string): LatchkeyError {
  if (err.problem === 'rejected') {
    return new LatchkeyError('invalid_input', 'invalid_credentials', `${provider} did not accept these credentials (HTTP ${err.status})`, {
      errors: [{ path, message: 'refused by the provider', code: 'invalid_credentials' }],
    });
  }
  if (err.problem === 'unavailable') {
    return new LatchkeyError(
      'upstream',
      'provider_unavailable',
      `${provider} could not be reached to check the credentials: ${err.message}`,
      {
        retryAfterMs: err.retryAfterMs,
      },
    );
  }
  return new LatchkeyError('unavailable', 'integration_misconfigured', `${provider}'s sign-in is not usable: ${err.message}`);
}
