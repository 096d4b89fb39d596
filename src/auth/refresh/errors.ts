import * as oidc from 'openid-client';
import { MissingTemplateValueError } from '../../catalog/template.js';
import { findAnswerTooLarge, hasCode, isAbortOrTimeout, LatchkeyError, type ErrorKind } from '../../domain/errors.js';
import { isRetryableStatus, parseRetryAfter } from '../../domain/retry.js';
import { answeredWith, providerText, redactMessage, sentStatus } from '../../oplog/redact.js';

export type RefreshErrorCode =
  'reauthorization_required' | 'provider_unavailable' | 'integration_misconfigured' | 'refresh_in_progress' | 'provider_answer_too_large';

/**
 * A refresh that did not happen. `permanent`: retrying will not help (the grant is revoked, the
 * client is rejected); the end user must re-authorize or an operator must fix the Integration.
 * Otherwise transient: back off (`retryAfterMs` when the provider said so) and try again. Its kind
 * is the status the fetch route answers it with (src/http/rest/routes/connections/refresh-failure.ts).
 */
export class RefreshError extends LatchkeyError {
  readonly permanent: boolean;
  declare readonly code: RefreshErrorCode;
  /**
   * What the token endpoint said (OAuth error code and description, HTTP status), redacted: never a
   * token or anything else the request carried (see {@link classifyRefreshFailure}).
   */
  readonly providerError?: { error?: string; description?: string; status?: number };
  /** Name of the Kubernetes Event recording this failure (the connection's `errors[].log_id`). */
  logId?: string;

  constructor(
    message: string,
    opts: {
      permanent: boolean;
      code: RefreshErrorCode;
      retryAfterMs?: number;
      providerError?: RefreshError['providerError'];
      logId?: string;
    },
  ) {
    super(refreshErrorKind(opts.code, opts.providerError?.status), opts.code, message, { retryAfterMs: opts.retryAfterMs });
    this.name = 'RefreshError';
    this.permanent = opts.permanent;
    this.providerError = opts.providerError;
    this.logId = opts.logId;
  }
}

/** 424 when the end user must authorize again; 502 when the provider failed (5xx, an oversized answer); 503 otherwise. */
function refreshErrorKind(code: RefreshErrorCode, providerStatus: number | undefined): ErrorKind {
  if (code === 'reauthorization_required') return 'reauthorization_required';
  if (code === 'provider_answer_too_large') return 'upstream';
  if (code === 'integration_misconfigured') return 'unavailable';
  return providerStatus !== undefined && providerStatus >= 500 ? 'upstream' : 'unavailable';
}

/** The code of {@link connectionNotFound}. */
export const UNKNOWN_CONNECTION = 'unknown_connection';

/** The refresher was asked for a connection that does not exist (or was deleted while it refreshed). */
export const connectionNotFound = (integration: string, connectionId: string) =>
  new LatchkeyError('not_found', UNKNOWN_CONNECTION, `connection ${connectionId} of integration ${integration} not found`);

/**
 * The provider refused the Integration's client (wrong secret, client disabled, grant not allowed
 * for it): an operator must fix the Integration; the end user's grant is not at fault.
 */
const CLIENT_OAUTH_ERRORS = new Set(['invalid_client', 'unauthorized_client', 'unsupported_grant_type']);
const PERMANENT_OAUTH_ERRORS = new Set(['invalid_grant', 'invalid_scope', 'access_denied']);
const TRANSIENT_OAUTH_ERRORS = new Set(['temporarily_unavailable', 'server_error', 'slow_down']);

/**
 * Turns whatever a token request threw into a classified {@link RefreshError}. The provider's words
 * in it (error, description, a message a strategy quoted) go through the shared redaction
 * (`providerText`): the log's rules, and `secrets` removed wherever they appear — the values the
 * request carried (refresh token, client secret, the app's JWT, a password) and the stored ones, since
 * a provider may quote what it was sent. What the refresher records (log line, Event, status error,
 * operation log entry, the Integration's client-fault annotation) and answers comes from it.
 */
export function classifyRefreshFailure(
  err: unknown,
  now: number,
  secrets: ReadonlyArray<string | undefined> = [],
  integration?: string,
): RefreshError {
  const failure = classify(err, now, secrets, integration);
  const p = failure.providerError;
  // A strategy's own RefreshError may quote the provider too: its text is redacted here as well.
  return new RefreshError(redactMessage(failure.message, secrets), {
    permanent: failure.permanent,
    code: failure.code,
    retryAfterMs: failure.retryAfterMs,
    logId: failure.logId,
    providerError: p && {
      ...p,
      ...(p.error !== undefined ? { error: providerText(p.error, secrets, 100) } : {}),
      ...(p.description !== undefined ? { description: providerText(p.description, secrets) } : {}),
    },
  });
}

function classify(err: unknown, now: number, secrets: ReadonlyArray<string | undefined>, integration?: string): RefreshError {
  if (err instanceof RefreshError) return err;
  if (hasCode(err, 'integration_not_configured')) {
    // The Integration cannot make the request at all (its client certificate missing, expired or not its key's;
    // no signing key): nothing was sent, and retrying changes nothing until an operator fixes the Integration.
    return new RefreshError(`${integration ? `integration ${integration}` : 'the integration'} cannot be used: ${err.message}`, {
      permanent: true,
      code: 'integration_misconfigured',
    });
  }
  const tooLarge = findAnswerTooLarge(err);
  if (tooLarge) {
    // The provider's fault, not the end user's: transient (backed off), credentials kept, nothing stored.
    return new RefreshError(`provider unavailable: ${tooLarge.message}`, { permanent: false, code: 'provider_answer_too_large' });
  }
  if (err instanceof MissingTemplateValueError) {
    return new RefreshError(`cannot build the token URL: ${err.message}`, { permanent: true, code: 'reauthorization_required' });
  }
  if (err instanceof oidc.ResponseBodyError) {
    const providerError = {
      error: providerText(err.error, secrets, 100),
      description: err.error_description === undefined ? undefined : providerText(err.error_description, secrets),
      status: sentStatus(err) ?? err.status,
    };
    const transient = isTransientStatus(err.status) || TRANSIENT_OAUTH_ERRORS.has(err.error);
    const what = `token endpoint answered ${answeredWith(providerError.status, providerError.error)}${providerError.description ? `: ${providerError.description}` : ''}`;
    if (transient) {
      return new RefreshError(`provider unavailable: ${what}`, {
        permanent: false,
        code: 'provider_unavailable',
        retryAfterMs: parseRetryAfter(err.response?.headers.get('retry-after'), now),
        providerError,
      });
    }
    if (CLIENT_OAUTH_ERRORS.has(err.error)) {
      return new RefreshError(`the provider refused the integration's client: ${what}`, {
        permanent: true,
        code: 'integration_misconfigured',
        providerError,
      });
    }
    const permanent = PERMANENT_OAUTH_ERRORS.has(err.error) || (err.status >= 400 && err.status < 500);
    return new RefreshError(`reauthorization required: ${what}`, {
      permanent,
      code: permanent ? 'reauthorization_required' : 'provider_unavailable',
      providerError,
    });
  }
  const response = findResponse(err);
  if (response) {
    const status = response.status;
    const providerError = { status };
    if (isTransientStatus(status)) {
      return new RefreshError(`provider unavailable: token endpoint answered ${status}`, {
        permanent: false,
        code: 'provider_unavailable',
        retryAfterMs: parseRetryAfter(response.headers.get('retry-after'), now),
        providerError,
      });
    }
    if (status >= 400) {
      // A 4xx without an OAuth error (a WAF's or proxy's page) says nothing about the grant: it is
      // the integration's path to the provider that is refused, not the end user's authorization.
      return new RefreshError(`the token endpoint refused the request without an OAuth error (HTTP ${status})`, {
        permanent: true,
        code: 'integration_misconfigured',
        providerError,
      });
    }
    return new RefreshError(`provider unavailable: unusable token endpoint response (HTTP ${status})`, {
      permanent: false,
      code: 'provider_unavailable',
      providerError,
    });
  }
  const timeout = causes(err).some(isAbortOrTimeout);
  // The root cause's message may hold the provider's text (a JSON parse error quotes the body).
  const detail = timeout ? 'token request timed out' : `token request failed: ${providerText(rootMessage(err), secrets, 200)}`;
  return new RefreshError(`provider unavailable: ${detail}`, { permanent: false, code: 'provider_unavailable' });
}

function causes(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err, i = 0; e && i < 6; e = (e as { cause?: unknown }).cause, i++) out.push(e);
  return out;
}

function findResponse(err: unknown): Response | undefined {
  return (
    causes(err).find((e): e is Response => e instanceof Response) ??
    causes(err)
      .map((e) => (e as { response?: unknown })?.response)
      .find((r): r is Response => r instanceof Response)
  );
}

function rootMessage(err: unknown): string {
  const all = causes(err);
  const last = all[all.length - 1];
  const message = (last as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : String(last);
}

/**
 * A token endpoint status that is not the grant's fault: the retryable ones, and any other 5xx (a
 * 501 is not worth retrying soon, but asking the end user to authorize again would not fix it).
 */
function isTransientStatus(status: number): boolean {
  return isRetryableStatus(status) || status >= 500;
}

// ---- the refresher ----
