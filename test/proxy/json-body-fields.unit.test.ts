/**
 * The credential set in a caller's JSON object (src/proxy/json-body-fields.ts, `proxy.body`): the caller's members
 * kept as written, the Provider's fields replacing any of the same name at the top level only, and every body that
 * is not one JSON object in UTF-8 refused with its own error. The round trip through the proxy is in
 * test/providers/mandrill-body-key.test.ts.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { LatchkeyError } from '../../src/domain/errors.js';
import { readCallerJsonObject, topLevelMembers, withBodyFields } from '../../src/proxy/json-body-fields.js';

const KEY: Array<[string, string]> = [['key', 'md-secret-1']];

function incoming(body: string | Buffer, contentType = 'application/json'): [Readable, Record<string, string>] {
  const data = typeof body === 'string' ? Buffer.from(body) : body;
  return [Readable.from([data]), { 'content-type': contentType, 'content-length': String(data.length) }];
}

async function sent(body: string, fields = KEY): Promise<string> {
  const [stream, headers] = incoming(body);
  const caller = await readCallerJsonObject(stream, headers, 'POST', 1024, 'Mandrill');
  const out = withBodyFields(caller, fields, {});
  if (out.kind !== 'buffered') throw new Error('not buffered');
  return out.data.toString('utf8');
}

async function refusal(body: string | Buffer, contentType?: string, method = 'POST', limit = 1024): Promise<[string, string]> {
  const [stream, headers] = incoming(body, contentType);
  try {
    await readCallerJsonObject(stream, headers, method, limit, 'Mandrill');
  } catch (err) {
    if (err instanceof LatchkeyError) return [err.kind, err.code];
    throw err;
  }
  throw new Error('accepted');
}

describe('the top-level members of a JSON object', () => {
  it('splits at top-level commas only, keeps each member as written and reads escaped names', () => {
    expect(topLevelMembers(' { "a" : [1, {"b": ","}] , "c\\u0022d": "}", "e":{"f":{}} } ')).toEqual([
      { name: 'a', raw: '"a" : [1, {"b": ","}]' },
      { name: 'c"d', raw: '"c\\u0022d": "}"' },
      { name: 'e', raw: '"e":{"f":{}}' },
    ]);
    expect(topLevelMembers('{}')).toEqual([]);
    expect(topLevelMembers('{ \n }')).toEqual([]);
  });
});

describe('the Provider fields in the caller object', () => {
  it('puts the fields first and keeps the rest byte for byte (digits past 2^53, escapes)', async () => {
    expect(await sent('{"n": 12345678901234567890, "s": "caf\\u00e9", "x": 1.50}')).toBe(
      '{"key":"md-secret-1","n": 12345678901234567890,"s": "caf\\u00e9","x": 1.50}',
    );
  });

  it("replaces the caller's member of the same name, however escaped, and only at the top level", async () => {
    expect(await sent('{"key":"mine","k\\u0065y":"again","nested":{"key":"stays"}}')).toBe(
      '{"key":"md-secret-1","nested":{"key":"stays"}}',
    );
  });

  it('escapes a field value for JSON, and makes a body of the fields alone (with its content type) when none was sent', async () => {
    const headers: OutgoingHttpHeaders = {};
    const caller = await readCallerJsonObject(Readable.from([]), {}, 'POST', 1024, 'Mandrill');
    const out = withBodyFields(caller, [['key', 'a"b\\c\n']], headers);
    expect(out.kind === 'buffered' && out.data.toString()).toBe('{"key":"a\\"b\\\\c\\n"}');
    expect(headers['content-type']).toBe('application/json');
    expect(JSON.parse(await sent('{}'))).toEqual({ key: 'md-secret-1' });
  });

  it('accepts application/json with a UTF-8 charset, in any case', async () => {
    const [stream, headers] = incoming('{"a":1}', 'Application/JSON; Charset="UTF-8"');
    await expect(readCallerJsonObject(stream, headers, 'POST', 1024, 'Mandrill')).resolves.toMatchObject({ sent: true });
  });
});

describe('bodies refused before anything is sent', () => {
  it.each<[string, string | Buffer, string | undefined, [string, string]]>([
    ['not JSON', '{"a":', undefined, ['invalid_input', 'invalid_json_body']],
    ['two values', '{} {}', undefined, ['invalid_input', 'invalid_json_body']],
    ['a byte order mark', '\ufeff{}', undefined, ['invalid_input', 'invalid_json_body']],
    [
      'bytes that are not UTF-8',
      Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
      undefined,
      ['invalid_input', 'invalid_json_body'],
    ],
    ['an array', '[]', undefined, ['invalid_input', 'json_body_not_object']],
    ['a number', '42', undefined, ['invalid_input', 'json_body_not_object']],
    ['null', 'null', undefined, ['invalid_input', 'json_body_not_object']],
    ['a form', 'a=1', 'application/x-www-form-urlencoded', ['unsupported_media_type', 'unsupported_media_type']],
    ['JSON-like media types', '{}', 'application/vnd.api+json', ['unsupported_media_type', 'unsupported_media_type']],
    ['another charset', '{}', 'application/json; charset=iso-8859-1', ['unsupported_media_type', 'unsupported_media_type']],
  ])('%s', async (_what, body, contentType, expected) => {
    expect(await refusal(body, contentType)).toEqual(expected);
  });

  it('a body over the limit (413) and a GET or HEAD (400), and their messages say nothing of the body', async () => {
    expect(await refusal(`{"a":"${'x'.repeat(2000)}"}`)).toEqual(['too_large', 'payload_too_large']);
    expect(await refusal('{}', undefined, 'GET')).toEqual(['invalid_input', 'json_body_required']);
    expect(await refusal('{}', undefined, 'HEAD')).toEqual(['invalid_input', 'json_body_required']);
    const [stream, headers] = incoming('{"secret-ish": tru}');
    await expect(readCallerJsonObject(stream, headers, 'POST', 1024, 'Mandrill')).rejects.toThrow(
      'The request body is not valid JSON; Mandrill takes a JSON object',
    );
  });
});
