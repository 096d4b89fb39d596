/**
 * fast-check arbitraries for hostile HTTP input: values shaped by a route's zod schema (through the
 * same JSON Schema the OpenAPI document shows) with hostile values mixed in at every level, path
 * segments and query strings with malformed percent-escapes and lone surrogates, and garbage bodies.
 */
import fc from 'fast-check';
import { z } from 'zod';

type JsonSchema = Record<string, any>;

const LONE_SURROGATES = ['\ud800', '\udbff', '\udc00', '\udfff', 'a\ud83d', '\ude00b'];

/** Strings an attacker would try: lone surrogates, controls, huge numbers as text, long runs. */
export function hostileString(known: string[] = []): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    { weight: 2, arbitrary: fc.constantFrom(...LONE_SURROGATES) },
    { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 8 }), fc.constantFrom(...LONE_SURROGATES)).map(([a, b]) => a + b) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '',
        ' ',
        '0',
        '-1',
        '1e13',
        '1e400',
        'NaN',
        'Infinity',
        '9007199254740993',
        'true',
        'null',
        '\u0000',
        '../..',
      ),
    },
    // Long, but under the 16 KB of headers Node's HTTP parser takes (431 before the app sees it).
    { weight: 1, arbitrary: fc.integer({ min: 256, max: 12_000 }).map((n) => 'x'.repeat(n)) },
    ...(known.length ? [{ weight: 4, arbitrary: fc.constantFrom(...known) }] : []),
  );
}

/** Numbers that break naive arithmetic: overflow a Date, lose precision, or are not integers. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -0, -1, 0.5, 1e13, 1e16, 1e308, -1e308, 2 ** 53 + 2, Number.MIN_VALUE, 8.64e15),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

/** JSON nested `depth` levels (built directly: an arbitrary would recurse as deep). */
export function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 2 ? { a: v } : [v];
  return v;
}

/** Any JSON value of the wrong type or shape: deep, large, or just unexpected. */
export function hostileJson(known: string[] = []): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    { weight: 2, arbitrary: hostileString(known) },
    { weight: 2, arbitrary: hostileNumber },
    { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}) },
    { weight: 1, arbitrary: fc.integer({ min: 20, max: 3_000 }).map(nested) },
    { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 20_000 }).map((n) => Array.from({ length: n }, (_, i) => i)) },
    { weight: 1, arbitrary: fc.dictionary(hostileString(), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 5 }) },
  );
}

/** The JSON Schema of a zod schema, as the OpenAPI document shows a request part. */
export function requestSchema(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
}

/**
 * Values of a JSON Schema, with a hostile value instead at any level (one in `1 / (hostility + 1)`).
 * `known` are strings worth trying everywhere (integration IDs, provider names).
 */
export function fromSchema(schema: JsonSchema, known: string[] = [], hostility = 4): fc.Arbitrary<unknown> {
  const valid = shaped(schema, known, hostility);
  return fc.oneof({ weight: hostility, arbitrary: valid }, { weight: 1, arbitrary: hostileJson(known) });
}

function shaped(s: JsonSchema, known: string[], hostility: number): fc.Arbitrary<unknown> {
  const sub = (child: JsonSchema) => fromSchema(child, known, hostility);
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const alternatives = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  if (alternatives?.length) return fc.oneof(...alternatives.map(sub));
  switch (s.type) {
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, JsonSchema>;
      const required = (s.required ?? []) as string[];
      const record = fc.record(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, sub(v)])), {
        requiredKeys: required.filter((k) => k in props),
      });
      const extra =
        s.additionalProperties && typeof s.additionalProperties === 'object'
          ? fc.dictionary(hostileString(known), sub(s.additionalProperties as JsonSchema), { maxKeys: 4 })
          : fc.constant({});
      return fc.tuple(record, extra).map(([r, e]) => ({ ...e, ...r }));
    }
    case 'array':
      return fc.array(s.items ? sub(s.items as JsonSchema) : fc.jsonValue({ maxDepth: 2 }), {
        maxLength: Math.min(Number(s.maxItems ?? 5), 5) + 2,
      });
    case 'string':
      return fc.oneof(
        fc.string({ minLength: Number(s.minLength ?? 0), maxLength: Math.min(Number(s.maxLength ?? 30), 30) }),
        ...(s.format === 'date-time' || s.format === 'date'
          ? [fc.date({ noInvalidDate: true }).map((d) => (s.format === 'date' ? d.toISOString().slice(0, 10) : d.toISOString()))]
          : []),
        ...(known.length ? [fc.constantFrom(...known)] : []),
      );
    case 'integer':
      return fc.integer({ min: Math.max(Number(s.minimum ?? -1e6), -1e12), max: Math.min(Number(s.maximum ?? 1e6), 1e12) });
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/**
 * Percent-encodes a string for a URL, but keeps what `encodeURIComponent` refuses: a lone surrogate
 * becomes its three "UTF-8" bytes (not valid UTF-8, as an attacker would send them).
 */
export function encodeLoosely(value: string): string {
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    } else out += encodeURIComponent(ch);
  }
  return out;
}

/** Raw text for a path segment or query value: encoded values, or malformed escapes as they are. */
export function urlText(anyValue: fc.Arbitrary<string>): fc.Arbitrary<string> {
  // Node refuses more than 16 KB of request line and headers (431, connection closed) before the app.
  const value = anyValue.map((v) => v.slice(0, 2_000));
  return fc.oneof(
    { weight: 4, arbitrary: value.map(encodeLoosely) },
    {
      weight: 2,
      arbitrary: fc.constantFrom('%', '%Z', '%ZZ', '%E0%A4', '%ED%A0%80', '%C0%80', '%FF', '%00', '%2F', '%25', '.', '..', '%2e%2e'),
    },
    { weight: 1, arbitrary: fc.tuple(value.map(encodeLoosely), fc.constantFrom('%', '%G1', '%ED%BF%BF')).map(([a, b]) => a + b) },
  );
}

/** A query string: the schema's parameters (as text), repeated keys and unknown keys. */
export function queryString(schema: JsonSchema | undefined, known: string[]): fc.Arbitrary<string> {
  const props = Object.keys((schema?.properties ?? {}) as Record<string, unknown>);
  const value = urlText(fc.oneof(hostileString(known), fromSchema({ type: 'string' }, known).map(asText)));
  const key = fc.oneof(
    { weight: 4, arbitrary: props.length ? fc.constantFrom(...props) : hostileString().map(encodeLoosely) },
    { weight: 1, arbitrary: hostileString().map(encodeLoosely) },
    { weight: 1, arbitrary: fc.constantFrom('tags[a]', 'tags[%ZZ]', '__proto__', 'constructor', 'tags[]') },
  );
  return fc
    .array(fc.tuple(key, value), { maxLength: 6 })
    .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}` : ''));
}

/** A request body: the schema's shape (with hostile values) as JSON, or text that is not JSON at all. */
export function bodyText(schema: JsonSchema | undefined, known: string[]): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 6, arbitrary: (schema ? fromSchema(schema, known) : hostileJson(known)).map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.string({ maxLength: 50 }),
        fc.constantFrom('{', '{"a":', '[1,2', '"\\ud800"', '{"__proto__":{"x":1}}', '1e99999', '\uFEFF{}', `${'['.repeat(50_000)}`),
      ),
    },
  );
}

/** Whether a status is allowed for hostile input: any non-5xx, or the documented upstream failure. */
export function acceptableStatus(status: number, body: unknown): boolean {
  if (status < 500) return true;
  const code = (body as { error?: { code?: unknown } } | undefined)?.error?.code;
  return (status === 502 || status === 503) && code === 'provider_unavailable';
}

/** The one error body shape: `{ error: { code, message, errors? } }` and nothing else. */
export function isErrorBody(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Object.keys(body).join() !== 'error') return false;
  const error = (body as { error: unknown }).error;
  if (typeof error !== 'object' || error === null) return false;
  const e = error as Record<string, unknown>;
  return (
    typeof e.code === 'string' &&
    typeof e.message === 'string' &&
    Object.keys(e).every((k) => ['code', 'message', 'errors'].includes(k)) &&
    (e.errors === undefined || Array.isArray(e.errors))
  );
}

/** A generated value as URL text (objects may have no prototype: String() would throw). */
export function asText(v: unknown): string {
  return typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
}
