import type { RefreshError } from '../../../../auth/refresh/token-refresher.js';
import { LatchkeyError } from '../../../../domain/errors.js';

/** A failed refresh as an HTTP answer: 4xx only when the end user must re-authorize. */
export function refreshFailure(err: RefreshError): LatchkeyError {
  const log = err.logId ? ` (log_id: ${err.logId})` : '';
  if (err.code === 'reauthorization_required') {
    return new LatchkeyError(
      'reauthorization_required',
      'reauthorization_required',
      `The provider rejected the refresh; the end user must reconnect: ${err.message}${log}`,
    );
  }
  if (err.code === 'integration_misconfigured') {
    return new LatchkeyError('unavailable', 'integration_misconfigured', `${err.message}${log}`);
  }
  if (err.code === 'provider_answer_too_large') {
    return new LatchkeyError('upstream', 'provider_answer_too_large', `The token could not be refreshed: ${err.message}${log}`);
  }
  // The provider failing (5xx) is an upstream error; a timeout, a rate limit or a refresh elsewhere is "later".
  const upstreamFailed = err.providerError?.status !== undefined && err.providerError.status >= 500;
  return new LatchkeyError(
    upstreamFailed ? 'upstream' : 'unavailable',
    err.code === 'refresh_in_progress' ? 'refresh_in_progress' : 'provider_unavailable',
    `The token could not be refreshed now; try again later: ${err.message}${log}`,
    { retryAfterMs: err.retryAfterMs },
  );
}
