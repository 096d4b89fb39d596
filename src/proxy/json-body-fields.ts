/**
 * Providers that take the credential in the JSON request body (`proxy.body`; Mandrill's `key`): the caller's
 * body is read whole, up to the proxy's replay limit, checked to be one JSON object in UTF-8, and sent with the
 * Provider's fields set at its top level. The caller's other members go out as sent, each byte for byte (a
 * number past 2^53 keeps its digits; nothing is parsed and written again); only the spacing between members
 * and their order change: the Provider's fields go first. A refused body is answered with a 4xx and nothing
 * reaches the provider. Providers without `proxy.body` never come here: their bodies stream as before.
 *
 * A field the caller already sent is replaced, not refused: the connection decides which account a call runs
 * as, as `proxy.headers` replace a caller's header of the same name, and an application moved from calling the
 * provider directly may still send a key of its own (Mandrill's official Node client sets `key` over whatever
 * the body holds). Every top-level member of that name goes, however its name is escaped (`"k\u0065y"`).
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { LatchkeyError } from '../domain/errors.js';
import { hasBody, readBody, type RequestBody } from './request-body.js';

/** The caller's JSON object: its top-level members as sent, and whether there was a body at all. */
export interface CallerJsonObject {
  members: Array<{ name: string; raw: string }>;
  sent: boolean;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Reads and checks the caller's body; a LatchkeyError (400, 413, 415) names what is wrong, never what it held. */
export async function readCallerJsonObject(
  incoming: Readable,
  headers: IncomingHttpHeaders,
  method: string,
  limit: number,
  provider: string,
): Promise<CallerJsonObject> {
  if (method === 'GET' || method === 'HEAD')
    throw new LatchkeyError(
      'invalid_input',
      'json_body_required',
      `${provider} takes its credential in a JSON request body, which a ${method} request does not carry: send the call with POST`,
    );
  if (!hasBody(headers)) return { members: [], sent: false };
  if (!isJson(headers['content-type']))
    throw new LatchkeyError(
      'unsupported_media_type',
      'unsupported_media_type',
      `${provider} takes its credential in a JSON request body: send Content-Type: application/json with a JSON object, or no body`,
    );
  const body = await readBody(incoming, headers, limit);
  if (body.kind === 'stream') {
    body.stream.resume(); // the rest is read and dropped, so the answer can go out on this connection
    throw new LatchkeyError(
      'too_large',
      'payload_too_large',
      `${provider} takes its credential in the JSON request body, which the proxy holds to add it: at most ${limit} bytes`,
    );
  }
  const text = body.kind === 'buffered' ? jsonText(body.data) : '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the body: not repeated.
    throw new LatchkeyError('invalid_input', 'invalid_json_body', `The request body is not valid JSON; ${provider} takes a JSON object`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new LatchkeyError(
      'invalid_input',
      'json_body_not_object',
      `The request body is JSON but not an object; ${provider}'s credential goes in the fields of a JSON object`,
    );
  return { members: topLevelMembers(text), sent: true };
}

/** The body sent for one attempt: the Provider's fields first, then the caller's other members; Content-Length follows from it. */
export function withBodyFields(
  caller: CallerJsonObject,
  fields: ReadonlyArray<readonly [string, string]>,
  headers: OutgoingHttpHeaders,
): RequestBody {
  const names = new Set(fields.map(([name]) => name));
  const parts = fields.map(([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value)}`);
  for (const m of caller.members) if (!names.has(m.name)) parts.push(m.raw);
  // No body sent: the fields alone make one, and say what it is.
  if (!caller.sent) headers['content-type'] = 'application/json';
  return { kind: 'buffered', data: Buffer.from(`{${parts.join(',')}}`, 'utf8') };
}

/** `application/json`, with no charset or UTF-8 (RFC 8259 §8.1: JSON between systems is UTF-8). */
function isJson(contentType: string | undefined): boolean {
  const [type, ...params] = String(contentType ?? '').split(';');
  if (type!.trim().toLowerCase() !== 'application/json') return false;
  return params.every((p) => {
    const [name, value] = p.split('=');
    return name!.trim().toLowerCase() !== 'charset' || /^"?utf-8"?$/i.test((value ?? '').trim());
  });
}

function jsonText(data: Buffer): string {
  try {
    return UTF8.decode(data);
  } catch {
    return '\u0000'; // not UTF-8: JSON.parse refuses it as not JSON
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The top-level members of a text JSON.parse read as an object, each as written (`"name": value`, trimmed). A
 * scan of strings and nesting only: the text is known to be valid JSON.
 */
export function topLevelMembers(text: string): Array<{ name: string; raw: string }> {
  const members: Array<{ name: string; raw: string }> = [];
  const add = (start: number, end: number) => {
    const raw = text.slice(start, end).trim();
    if (raw) members.push({ name: JSON.parse(raw.slice(0, stringEnd(raw, 0) + 1)) as string, raw });
  };
  let start = text.indexOf('{') + 1;
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = stringEnd(text, i);
    else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (depth === 0) {
        add(start, i);
        break;
      }
      depth--;
    } else if (c === 0x2c && depth === 0) {
      add(start, i);
      start = i + 1;
    }
  }
  return members;
}

/** The index of the quote closing the string that opens at `open`. */
function stringEnd(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i;
  }
  return text.length;
}
