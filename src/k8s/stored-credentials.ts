/**
 * The stored form of a connection's credentials in its Secret (`credentials.json`), apart from what
 * the API returns in one respect: a token is stored once. A provider's answer (`raw`) repeats the
 * tokens kept at the top (an OAuth 2 answer's `access_token` and `refresh_token`, an OAuth 1 one's
 * `oauth_token` and `oauth_token_secret`); stored, such a value of `raw` is left out and `raw_refs`
 * says where it was and which top-level field holds it. Reading puts each back in its place, so the
 * credentials read are the ones written, key order included (the fetch answer is byte-identical).
 *
 * A Secret written before (no `raw_refs`) reads as it is. A `raw_refs` that no longer fits its `raw`
 * (a release before this one replaced `raw` and kept the other fields) is dropped unused: it is
 * trusted only while every value it names is still missing from `raw`, which an answer that brings
 * new tokens never is.
 */

/** The private field naming the values of `raw` stored at the top instead: raw key → its position, or [position, top-level field]. */
export const RAW_REFS = 'raw_refs';

/** Values shorter than this are left in place: the reference would cost about as much as the value. */
const MIN_SHARED_LENGTH = 16;

type Json = Record<string, unknown>;
type Ref = number | [number, string];

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The credentials as stored: in `c` and in a CUSTOM connection's `user`, each token once. */
export function toStoredForm<T extends object>(credentials: T): T {
  const out = shareTokens(credentials as Json);
  if (isObject(out.user)) return { ...out, user: shareTokens(out.user) } as T;
  return out as T;
}

/** The credentials as written, from their stored form (either shape: with `raw_refs` or without). */
export function fromStoredForm<T extends object>(stored: T): T {
  const out = restoreTokens(stored as Json);
  if (isObject(out.user)) return { ...out, user: restoreTokens(out.user) } as T;
  return out as T;
}

function shareTokens(c: Json): Json {
  // A field of that name of the credentials' own: stored as it is (it reads back as it is, see restoreTokens).
  if (!isObject(c.raw) || Object.hasOwn(c, RAW_REFS)) return c;
  // A top-level field per value (the first of equal ones), so an answer's token maps to where it is kept.
  const fieldOf = new Map<string, string>();
  for (const [k, v] of Object.entries(c))
    if (k !== 'raw' && typeof v === 'string' && v.length >= MIN_SHARED_LENGTH && !fieldOf.has(v)) fieldOf.set(v, k);
  // Entries, not assignments: a provider's answer may hold any key (`__proto__` too).
  const kept: Array<[string, unknown]> = [];
  const refs: Array<[string, Ref]> = [];
  Object.entries(c.raw).forEach(([k, v], position) => {
    const field = typeof v === 'string' ? fieldOf.get(v) : undefined;
    if (field === undefined) kept.push([k, v]);
    else refs.push([k, field === k ? position : [position, field]]);
  });
  if (refs.length === 0) return c;
  return { ...c, raw: Object.fromEntries(kept), [RAW_REFS]: Object.fromEntries(refs) };
}

function restoreTokens(c: Json): Json {
  const refs = readRefs(c[RAW_REFS]);
  // Not a reference list: a field of the credentials' own (TWO_STEP keeps the end user's fields at the top).
  if (!Object.hasOwn(c, RAW_REFS) || !refs) return c;
  const { [RAW_REFS]: _refs, ...rest } = c;
  const raw = rest.raw;
  // Trusted only while every value it names is missing from `raw`; a value no longer held at the top stays out.
  if (!isObject(raw) || refs.some(({ key }) => Object.hasOwn(raw, key))) return rest;
  const entries = Object.entries(raw);
  for (const { key, position, field } of refs) if (typeof rest[field] === 'string') entries.splice(position, 0, [key, rest[field]]);
  return { ...rest, raw: Object.fromEntries(entries) };
}

/** The references of a `raw_refs` value in ascending position, or undefined when it is not one. */
function readRefs(refs: unknown): Array<{ key: string; position: number; field: string }> | undefined {
  if (!isObject(refs)) return undefined;
  const out: Array<{ key: string; position: number; field: string }> = [];
  for (const [key, ref] of Object.entries(refs)) {
    const [position, field] = typeof ref === 'number' ? [ref, key] : Array.isArray(ref) && ref.length === 2 ? ref : [];
    if (!Number.isInteger(position) || (position as number) < 0 || typeof field !== 'string') return undefined;
    out.push({ key, position: position as number, field });
  }
  return out.length ? out.sort((a, b) => a.position - b.position) : undefined;
}
