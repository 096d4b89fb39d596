/**
 * Providers' token answers as they send them, read into what RFC 6749 (and openid-client) expects, and
 * the connection configuration values a Provider takes from them (`connectionConfiguration[].from`).
 * Provider-specific shapes are data on the Provider (`tokenResponse`: an error in a 200 answer, a nested
 * token); what every provider may do (any `token_type`, `expires_in` as a string or absent, a
 * form-encoded answer) is read without declaring anything.
 */
import type { ConfigValueSource, ProviderSpec, TokenResponseSpec } from '../k8s/resources.js';

/** A dotted path's value (`team.id`; a number indexes an array); `''` is the value itself. */
export function valueAt(value: unknown, path: string): unknown {
  if (path === '') return value;
  let at: unknown = value;
  for (const part of path.split('.')) {
    if (Array.isArray(at) && /^\d+$/.test(part)) at = at[Number(part)];
    else if (at && typeof at === 'object' && !Array.isArray(at) && Object.hasOwn(at, part)) at = (at as Record<string, unknown>)[part];
    else return undefined;
  }
  return at;
}

/** A token answer's body: JSON, or form-encoded (GitHub without `Accept: application/json`, older providers). */
export function parseAnswerBody(text: string, contentType: string): Record<string, unknown> | undefined {
  const type = contentType.toLowerCase();
  if (type.includes('json') || /^\s*\{/.test(text)) {
    try {
      const body: unknown = JSON.parse(text);
      return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
    } catch {
      if (type.includes('json')) return undefined;
    }
  }
  if (type.includes('x-www-form-urlencoded') || type.includes('text/plain') || type === '') {
    const params = new URLSearchParams(text.trim());
    // Only what reads as a token answer (a token or an RFC 6749 error), not any text at all.
    if (!params.has('access_token') && !params.has('error')) return undefined;
    return Object.fromEntries(params);
  }
  return undefined;
}

export type TokenAnswer =
  /** `fields`: what openid-client checks (strict shape); `original`: the answer as sent (the credentials' `raw`). */
  | { kind: 'tokens'; original: Record<string, unknown>; fields: Record<string, unknown> }
  /**
   * An error answer in a 200 (the Provider's `errorWhen`, or a string `error` without `access_token`):
   * handled like an RFC 6749 error answer.
   */
  | { kind: 'error'; error: string; description?: string };

/** Whether the answer is an error by the Provider's `errorWhen`: its value equals `equals`, or differs from `notEquals`. */
function matchesErrorWhen(when: NonNullable<TokenResponseSpec['errorWhen']>, original: Record<string, unknown>): boolean {
  const value = valueAt(original, when.path);
  if (when.notEquals !== undefined) return value !== when.notEquals;
  return value === when.equals;
}

/**
 * The error a successful (2xx) answer carries: the Provider's `errorWhen` (Slack's `{"ok": false}`, TikTok's
 * `code` other than 0), or RFC 6749's error answer sent with a 2xx (a string `error` without an `access_token`:
 * GitHub OAuth Apps, Zoho). Read alike for token answers and revocation answers.
 */
export function answerError(
  spec: TokenResponseSpec | undefined,
  original: Record<string, unknown>,
): { error: string; description?: string } | undefined {
  if (spec?.errorWhen && matchesErrorWhen(spec.errorWhen, original)) {
    const code = valueAt(original, spec.errorCodePath ?? 'error');
    const description = valueAt(original, spec.errorDescriptionPath ?? 'error_description');
    return {
      error: typeof code === 'string' || typeof code === 'number' ? String(code) : 'invalid_request',
      ...(typeof description === 'string' ? { description } : {}),
    };
  }
  if (typeof original.error === 'string' && original.error !== '' && original.access_token === undefined) {
    const description = original.error_description;
    return { error: original.error, ...(typeof description === 'string' ? { description } : {}) };
  }
  return undefined;
}

/**
 * Reads a successful (2xx) token answer. `errorWhen`, or a string `error` without an `access_token`, turns
 * it into an error; `tokenPath` finds the token
 * fields when they are nested (an answer with the token at its top level is read there, as Slack's user
 * token refreshes are); `token_type` other than bearer / DpoP is kept in `original` and read as bearer;
 * `expires_in` becomes a number or is dropped (and `0` with `expiresInZeroMeansNever`); a `scope` that is not
 * a string is dropped; an `id_token` is dropped (Latchkey does not use ID tokens
 * from token requests, and their issuer is seldom the token URL's).
 */
export function readTokenAnswer(spec: TokenResponseSpec | undefined, original: Record<string, unknown>): TokenAnswer {
  const error = answerError(spec, original);
  if (error) return { kind: 'error', ...error };
  const nested = spec?.tokenPath ? valueAt(original, spec.tokenPath) : undefined;
  const useNested = nested && typeof nested === 'object' && !Array.isArray(nested) && 'access_token' in nested;
  const fields: Record<string, unknown> = { ...(useNested ? (nested as Record<string, unknown>) : original) };
  delete fields.id_token;
  const type = typeof fields.token_type === 'string' ? fields.token_type.toLowerCase() : '';
  if (type !== 'bearer' && type !== 'dpop') fields.token_type = 'bearer';
  if (typeof fields.expires_in === 'string' && /^\d+(\.\d+)?$/.test(fields.expires_in.trim()))
    fields.expires_in = Math.floor(Number(fields.expires_in));
  if (fields.expires_in !== undefined && (typeof fields.expires_in !== 'number' || !Number.isFinite(fields.expires_in)))
    delete fields.expires_in;
  if (spec?.expiresInZeroMeansNever && fields.expires_in === 0) delete fields.expires_in;
  // Linear's `scope` is a JSON array, Mailchimp's null: kept in `original`, never a reason to refuse.
  if (fields.scope !== undefined && typeof fields.scope !== 'string') delete fields.scope;
  return { kind: 'tokens', original, fields };
}

/**
 * The access token's expiry as an ISO time: from `tokenResponse.expiresAtPath` in the answer as sent (Clover's
 * `access_token_expiration`: Unix seconds; epoch milliseconds and ISO 8601 are read too), else from the
 * lifetime (`expires_in`) counted from `nowMs`; undefined when the answer gives neither. A time that is not one
 * (a word, a negative number) is no value, and the lifetime is used.
 */
export function tokenExpiresAt(
  spec: TokenResponseSpec | undefined,
  original: Record<string, unknown> | undefined,
  expiresIn: number | undefined,
  nowMs: number,
): string | undefined {
  if (spec?.expiresAtPath && original) {
    const v = valueAt(original, spec.expiresAtPath);
    const n = typeof v === 'string' && /^\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : v;
    const ms = typeof n === 'number' ? (n < 1e12 ? n * 1000 : n) : typeof n === 'string' ? Date.parse(n) : NaN;
    if (Number.isFinite(ms) && ms > 0 && ms < 8.64e15) return new Date(ms).toISOString();
  }
  return expiresIn !== undefined ? new Date(nowMs + expiresIn * 1000).toISOString() : undefined;
}

/** The connection configuration keys whose values the provider returns, by where they come from. */
export function providerValueKeys(spec: Pick<ProviderSpec, 'connectionConfiguration'>): {
  all: Set<string>;
  afterCallback: Set<string>;
} {
  const all = new Set<string>();
  const afterCallback = new Set<string>();
  for (const f of spec.connectionConfiguration ?? []) {
    if (typeof f === 'string' || !f.from) continue;
    all.add(f.name);
    if (!f.from.callback) afterCallback.add(f.name);
  }
  return { all, afterCallback };
}

/**
 * A value as stored: strings and numbers as text; `as: host` keeps a URL's host name (a bare host stays),
 * `as: subdomain` the first label of that host name; then `match` (a regular expression) keeps its first
 * group (or the whole match), and a value it does not match is no value (Zoho: `^accounts\.zoho\.(.+)$`
 * keeps `eu` of `accounts.zoho.eu`).
 */
export function configValue(value: unknown, as: ConfigValueSource['as'], match?: string): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) value = String(value);
  if (typeof value !== 'string' || value === '') return undefined;
  let out = value;
  if (as) {
    let host = value;
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
      try {
        host = new URL(value).hostname;
      } catch {
        return value; // refused by the key's rule
      }
    }
    out = as === 'subdomain' ? host.split('.')[0]! : host;
  }
  if (match === undefined) return out;
  if (out.length > 1024) return undefined;
  let found: RegExpExecArray | null;
  try {
    found = new RegExp(match).exec(out);
  } catch {
    return undefined; // the Provider's Ready condition reports the pattern
  }
  const kept = found ? (found[1] ?? found[0]) : '';
  return kept === '' ? undefined : kept;
}

/**
 * The values a Provider takes from the token answer or the callback's query (`from: { tokenResponse }`,
 * `from: { callback }`), for the keys the given configuration does not have yet. Not checked here: the
 * caller checks the whole configuration by the keys' rules before anything is stored or sent.
 */
export function valuesFromAnswers(
  spec: Pick<ProviderSpec, 'connectionConfiguration'>,
  answers: { tokenAnswer?: Record<string, unknown>; callbackQuery?: URLSearchParams },
  given: Record<string, unknown>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of spec.connectionConfiguration ?? []) {
    if (typeof f === 'string' || !f.from || given[f.name] !== undefined) continue;
    let value: string | undefined;
    if (f.from.tokenResponse && answers.tokenAnswer)
      value = configValue(valueAt(answers.tokenAnswer, f.from.tokenResponse), f.from.as, f.from.match);
    else if (f.from.callback && answers.callbackQuery)
      value = configValue(answers.callbackQuery.get(f.from.callback) ?? undefined, f.from.as, f.from.match);
    if (value !== undefined) out[f.name] = value;
  }
  return out;
}
