import { SECRET_KEYS } from '../app/log.js';

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
  `(["']?\\b(?:${escaped})["']?\\s*[:=]\\s*)("(?:[^"\\\\]|\\\\.)*"|'[^']*'|[^\\s&,;"'}\\]]+)`,
  'gi',
);
const CODE_PARAM = /([?&#]code=)[^&#\s]+/gi;
// A credential after an auth scheme looks like one (8+ characters with a digit or a token
// punctuation mark), so that prose such as "Token refresh failed" or "Basic authentication" stays.
const AUTH_SCHEME = /\b(Bearer|Basic|Token|OAuth)\s+(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}/gi;
const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;
const URL_USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+:[^/\s@]+@/gi;

/**
 * Redacts one message. `secrets` are values the caller knows are secret (the client secret it sent,
 * the refresh token it used): they are removed wherever they appear, whatever surrounds them.
 */
export function redactMessage(text: string, secrets: ReadonlyArray<string | undefined> = []): string {
  let out = text;
  for (const s of secrets) {
    // Short values would blank out ordinary words; a credential this short is not worth the noise.
    if (s && s.length >= 6) out = out.split(s).join(CENSOR);
  }
  out = out
    .replace(JWT, CENSOR)
    .replace(AUTH_SCHEME, (_m, scheme: string) => `${scheme} ${CENSOR}`)
    .replace(URL_USERINFO, `$1${CENSOR}@`)
    .replace(CODE_PARAM, `$1${CENSOR}`)
    .replace(NAMED_VALUE, (_m, name: string, value: string) => {
      const quote = value.startsWith('"') ? '"' : value.startsWith("'") ? "'" : '';
      return `${name}${quote}${CENSOR}${quote}`;
    });
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
