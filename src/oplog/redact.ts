import { SECRET_KEYS } from '../platform/log.js';

const CENSOR = '[redacted]';
/** Longest message kept; the rest is cut (an answer body can be long). */
export const MAX_MESSAGE = 1024;

/**
 * The log's redaction rules applied to free text. pino redacts fields by name; a message is text,
 * so the same names are found as `name=value`, `name: value` and `"name":"value"` (URL query
 * strings, form bodies, JSON answers), plus what has no name: `Bearer`/`Basic` credentials and JWTs.
 * `code` is redacted only as a URL or form parameter (`?code=`, `&code=`): that is where an OAuth
 * code appears, while `code: invalid_grant` is a provider's error worth keeping.
 */
const NAMES = [...new Set([...SECRET_KEYS, 'client_assertion', 'assertion', 'signature', 'sig', 'key'])];
const escaped = NAMES.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
const NAMED_VALUE = new RegExp(
  // the name, optionally quoted; then = or :, optionally spaced; then the value up to a delimiter
  // (a value already redacted is taken whole, so redacting twice changes nothing)
  `(["']?\\b(?:${escaped})["']?\\s*[:=]\\s*)(\\[redacted\\]|"(?:[^"\\\\]|\\\\.)*"|'[^']*'|[^\\s&,;"'}\\]]+)`,
  'gi',
);
const CODE_PARAM = /([?&#]code=)[^&#\s]+/gi;
// A credential after an auth scheme looks like one (8+ characters with a digit or a token
// punctuation mark), so that prose such as "Token refresh failed" or "Basic authentication" stays.
const AUTH_SCHEME = /\b(Bearer|Basic|Token|OAuth)\s+(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}/gi;
const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;
const URL_USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+:[^/\s@]+@/gi;

/**
 * The ways a value is written in text a peer sends back: as it is, URL-encoded (a quoted query or
 * form body), also in the stricter form OAuth clients use for HTTP Basic client credentials (RFC 6749
 * §2.3.1: `-._~!*'()` encoded too), form-encoded (spaces as `+`), and JSON-escaped.
 */
function spellings(value: string): string[] {
  const url = encodeURIComponent(value);
  const strict = url.replace(/[-._~!*'()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const form = new URLSearchParams({ v: value }).toString().slice(2);
  return [value, url, strict, strict.replace(/%20/g, '+'), form, JSON.stringify(value).slice(1, -1)];
}

/**
 * Redacts one message. `secrets` are values the caller knows are secret (the client secret it sent,
 * the refresh token it used): they are removed wherever they appear, whatever surrounds them, in each
 * of their {@link spellings}, the longest first (a JWT before its signature).
 */
export function redactMessage(text: string, secrets: ReadonlyArray<string | undefined> = []): string {
  let out = text;
  // Short values would blank out ordinary words; a credential this short is not worth the noise.
  const forms = new Set(secrets.filter((s): s is string => typeof s === 'string' && s.length >= 6).flatMap(spellings));
  for (const form of [...forms].sort((a, b) => b.length - a.length)) out = out.split(form).join(CENSOR);
  out = out
    .replace(JWT, CENSOR)
    .replace(AUTH_SCHEME, (_m, scheme: string) => `${scheme} ${CENSOR}`)
    .replace(URL_USERINFO, `$1${CENSOR}@`)
    .replace(CODE_PARAM, `$1${CENSOR}`)
    .replace(NAMED_VALUE, (_m, name: string, value: string) => {
      const quote = value.startsWith('"') ? '"' : value.startsWith("'") ? "'" : '';
      return `${name}${quote}${CENSOR}${quote}`;
    });
  // Cut only now: a cut before would leave the start of a secret that no longer matches whole.
  return out.length > MAX_MESSAGE ? `${out.slice(0, MAX_MESSAGE - 1)}…` : out;
}

const SECRET_NAME_SET = new Set([...SECRET_KEYS, 'apiKey', 'password', 'token'].map((k) => k.toLowerCase()));

/** The values of an object's secret-named fields (one level down too: `raw` token answers), for `redactMessage`. */
export function secretValues(o: Record<string, unknown> | undefined): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(o ?? {})) {
    if (typeof v === 'string' && SECRET_NAME_SET.has(k.toLowerCase())) out.push(v);
    else if (v && typeof v === 'object' && !Array.isArray(v)) out.push(...secretValues(v as Record<string, unknown>));
  }
  return out;
}

/**
 * A peer's own words (a token endpoint's error description, a GitHub-style `message`, a WAF page, an
 * error whose message quotes them) for a log line, a status, an Event, an annotation or an error
 * message: redacted by the log's rules and cleared of `secrets`, the values the request carried (some
 * providers quote what they were sent), then cut to `max` characters, so a cut never leaves part of a
 * secret behind. Used wherever such text leaves Latchkey (refresh failures, the Connect flows).
 */
export function providerText(text: unknown, secrets: ReadonlyArray<string | undefined> = [], max = 300): string {
  const out = redactMessage(typeof text === 'string' ? text : String(text), secrets);
  return out.length > max ? `${out.slice(0, max - 1)}…` : out;
}

/**
 * Set on the 400 Latchkey makes of a token error a provider sent in a 2xx answer (Slack's and Reddit's
 * `{"ok": false}` or `{"error": ...}` with a 200; openid-client reads RFC 6749 errors from 4xx answers
 * only): the status the provider really sent, so that the log says what it sent.
 */
export const PROVIDER_STATUS_HEADER = 'x-latchkey-provider-status';

/** The status a token error came with from the provider: the 2xx of an error in a successful answer, else the error's. */
export function sentStatus(err: { status?: unknown; response?: unknown }): number | undefined {
  const headers = (err.response as { headers?: { get?: (name: string) => string | null } } | undefined)?.headers;
  const sent = Number(typeof headers?.get === 'function' ? headers.get(PROVIDER_STATUS_HEADER) : undefined);
  if (sent >= 200 && sent < 300) return sent;
  return typeof err.status === 'number' ? err.status : undefined;
}

/** "200 with error invalid_auth" for an error in a successful answer, "400 invalid_grant" for an error answer. */
export function answeredWith(status: number | undefined, error: string): string {
  return status !== undefined && status >= 200 && status < 300 ? `${status} with error ${error}` : `${status ?? ''} ${error}`.trim();
}

/**
 * What a provider's token endpoint answered, for the log: its status (as the provider sent it), OAuth
 * `error` and description (what a support engineer needs) when the error carries them (openid-client's
 * ResponseBodyError does; its message alone does not), else the error's message; through {@link providerText}.
 */
export function providerAnswer(err: unknown, secrets: ReadonlyArray<string | undefined> = []): string {
  const e = err as { status?: unknown; error?: unknown; error_description?: unknown; message?: unknown; response?: unknown };
  if (typeof e?.error === 'string' && typeof e.status === 'number') {
    const description = typeof e.error_description === 'string' ? `: ${providerText(e.error_description, secrets)}` : '';
    return redactMessage(
      `the token endpoint answered ${answeredWith(sentStatus(e), providerText(e.error, secrets, 100))}${description}`,
      secrets,
    );
  }
  return redactMessage(typeof e?.message === 'string' ? e.message : String(err), secrets);
}

/** Request fields whose values are not secrets: a provider's answer that quotes them stays readable. */
const PLAIN_FIELDS = new Set([
  'grant_type',
  'client_id',
  'scope',
  'redirect_uri',
  'response_type',
  'client_assertion_type',
  'audience',
  'resource',
  'token_type_hint',
  'requested_token_type',
  'subject_token_type',
]);
/** Header names that carry a credential besides Authorization (`x-api-key`, Bill.com's `devKey` and `sessionId`, …). */
const SECRET_HEADER = /authorization|token|secret|key|session|password|cookie|signature|assertion/i;

/**
 * The values an outgoing request carries that a peer's answer must not bring back into a log line, a
 * status, an Event or an error message: the Authorization header and its credential (for HTTP Basic
 * also the password, as sent and decoded; for a JWT also its signature), headers named like
 * credentials, and every value of a form or JSON body (refresh token, client secret, client
 * assertion, password, developer key, …) except the plain OAuth parameters ({@link PLAIN_FIELDS}).
 * For {@link redactMessage}'s `secrets`.
 */
export function requestSecrets(init: RequestInit | undefined): string[] {
  const out: string[] = [];
  try {
    for (const [name, value] of new Headers(init?.headers)) {
      if (name === 'authorization' || name === 'proxy-authorization') out.push(...credentialParts(value));
      else if (SECRET_HEADER.test(name)) out.push(value);
    }
  } catch {
    // headers fetch would refuse as well: nothing was sent
  }
  const body = init?.body;
  if (body instanceof URLSearchParams) out.push(...formValues(body));
  else if (typeof body === 'string') {
    let json: unknown;
    try {
      json = /^\s*[[{]/.test(body) ? JSON.parse(body) : undefined;
    } catch {
      json = undefined;
    }
    out.push(...(json === undefined ? formValues(new URLSearchParams(body)) : jsonValues(json)));
  }
  return out;
}

function formValues(form: URLSearchParams): string[] {
  return [...form].filter(([k]) => !PLAIN_FIELDS.has(k)).map(([, v]) => v);
}

function jsonValues(value: unknown, key = ''): string[] {
  if (typeof value === 'string') return PLAIN_FIELDS.has(key) ? [] : [value];
  if (Array.isArray(value)) return value.flatMap((v) => jsonValues(v, key));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => jsonValues(v, k));
  return [];
}

/** An Authorization header's value, its credential, and what the credential holds. */
function credentialParts(header: string): string[] {
  const match = /^\s*(\S+)\s+(.+?)\s*$/.exec(header);
  if (!match) return [header];
  const scheme = match[1]!;
  const credential = match[2]!;
  const out = [header, credential];
  if (/^basic$/i.test(scheme)) {
    const decoded = Buffer.from(credential, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon >= 0) {
      // `client_id:client_secret`, each form-encoded by OAuth clients: the secret as sent and decoded.
      const password = decoded.slice(colon + 1);
      out.push(decoded, password, formDecoded(password));
    }
  }
  const signature = credential.split('.')[2];
  if (signature && credential.split('.').length === 3) out.push(signature);
  return out;
}

function formDecoded(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}
