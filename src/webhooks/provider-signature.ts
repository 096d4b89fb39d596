/**
 * Checks a provider's webhook signature as its Provider declares it (`spec.webhooks.signature`): one
 * interpreter for every provider, schemes from a closed set. No I/O; the secret comes from the caller.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookSignatureSpec } from '../k8s/resources.js';
import { valuesAt } from './provider-values.js';

/** What the signature may cover: the request as it arrived. Header names are lower case. */
export interface ReceivedRequest {
  method: string;
  /** The URL the provider called (the public one: the URL Latchkey shows for the Integration). */
  url: string;
  headers: Record<string, string | undefined>;
  body: Buffer;
  /** The body as JSON, when it is JSON. */
  json: unknown;
}

export type SignatureVerdict = { ok: true } | { ok: false; reason: string };

const refused = (reason: string): SignatureVerdict => ({ ok: false, reason });

export function verifySignature(spec: WebhookSignatureSpec, req: ReceivedRequest, secret: string, nowMs: number): SignatureVerdict {
  if (!secret) return refused('the Integration has no webhook secret');
  if (spec.scheme === 'stripe') return verifyStripe(spec, req, secret, nowMs);
  if (spec.scheme === 'client-state') return verifyClientState(spec, req, secret);
  if (spec.scheme === 'jwt-hs256') return verifyJwt(spec, req, secret, nowMs);
  return verifyHmac(spec, req, secret, nowMs);
}

/** HMAC (SHA-256, or SHA-1 for hmac-sha1) of the declared signed content, in the declared header, after its prefix, hex or base64. */
function verifyHmac(spec: WebhookSignatureSpec, req: ReceivedRequest, secret: string, nowMs: number): SignatureVerdict {
  const signature = req.headers[spec.header ?? ''];
  if (!signature) return refused(`no ${spec.header} header`);
  const prefix = spec.prefix ?? '';
  if (!signature.startsWith(prefix)) return refused(`${spec.header} does not start with ${prefix}`);
  if (spec.timestamp) {
    const sent = spec.timestamp.header ? req.headers[spec.timestamp.header] : valuesAt(req.json, spec.timestamp.bodyPath ?? '')[0];
    const late = outsideWindow(spec.timestamp, typeof sent === 'number' ? String(sent) : (sent as string | undefined), nowMs);
    if (late) return refused(late);
  }
  const content = signedContent(spec.signedContent ?? '{body}', req);
  const key = spec.secretEncoding === 'base64' ? Buffer.from(secret, 'base64') : secret;
  const expected = createHmac(spec.scheme === 'hmac-sha1' ? 'sha1' : 'sha256', key)
    .update(content)
    .digest();
  return sameDigest(expected, decode(signature.slice(prefix.length), spec.encoding ?? 'hex'))
    ? { ok: true }
    : refused('the signature does not match');
}

/** Stripe's `Stripe-Signature: t=<seconds>,v1=<hex>[,v1=…]` over `<t>.<body>` (any v1 may match: secret rotation). */
function verifyStripe(spec: WebhookSignatureSpec, req: ReceivedRequest, secret: string, nowMs: number): SignatureVerdict {
  const sent = req.headers[spec.header ?? 'stripe-signature'];
  if (!sent) return refused(`no ${spec.header ?? 'stripe-signature'} header`);
  const pairs = sent.split(',').map((p) => {
    const i = p.indexOf('=');
    return [p.slice(0, i).trim(), p.slice(i + 1).trim()] as const;
  });
  const t = pairs.find(([k]) => k === 't')?.[1];
  const v1 = pairs.filter(([k]) => k === 'v1').map(([, v]) => v);
  if (!t || v1.length === 0) return refused('the signature header has no t= or no v1=');
  const late = outsideWindow({ unit: 'seconds', toleranceSeconds: spec.timestamp?.toleranceSeconds ?? 300 }, t, nowMs);
  if (late) return refused(late);
  const expected = createHmac('sha256', secret)
    .update(Buffer.concat([Buffer.from(`${t}.`), req.body]))
    .digest();
  return v1.some((v) => sameDigest(expected, decode(v, 'hex'))) ? { ok: true } : refused('the signature does not match');
}

/** Microsoft Graph's `clientState`: every notification of the body carries the secret given at subscription. */
function verifyClientState(spec: WebhookSignatureSpec, req: ReceivedRequest, secret: string): SignatureVerdict {
  const states = valuesAt(req.json, spec.bodyPath ?? '');
  if (states.length === 0) return refused(`no ${spec.bodyPath} in the body`);
  const want = Buffer.from(secret);
  const all = states.every((s) => typeof s === 'string' && sameDigest(want, Buffer.from(s)));
  return all ? { ok: true } : refused('the clientState does not match');
}

/** Longest token read (Atlassian's are a few hundred bytes). */
const MAX_JWT = 8192;

/**
 * A JWT signed with HS256 under the secret (Atlassian: the OAuth 2.0 app's client secret), in the
 * declared header after its prefix. Only HS256 is taken (never `none` or another algorithm the token
 * names); `exp` is required and may be at most `toleranceSeconds` past, `iat` at most that far ahead.
 * The token does not cover the body: HTTPS protects it, as for Microsoft Graph's clientState.
 */
function verifyJwt(spec: WebhookSignatureSpec, req: ReceivedRequest, secret: string, nowMs: number): SignatureVerdict {
  const header = spec.header ?? 'authorization';
  const sent = req.headers[header];
  if (!sent) return refused(`no ${header} header`);
  const prefix = spec.prefix ?? 'Bearer ';
  if (!sent.toLowerCase().startsWith(prefix.toLowerCase())) return refused(`${header} does not start with ${prefix.trim()}`);
  const token = sent.slice(prefix.length).trim();
  const parts = token.split('.');
  if (token.length > MAX_JWT || parts.length !== 3 || !parts.every((p) => /^[A-Za-z0-9_-]+$/.test(p)))
    return refused('the token is not a JWT');
  const [head, claims, signature] = parts as [string, string, string];
  const alg = (jsonOf(head) as { alg?: unknown } | undefined)?.alg;
  if (alg !== 'HS256') return refused('the token is not signed with HS256');
  const expected = createHmac('sha256', secret).update(`${head}.${claims}`).digest();
  if (!sameDigest(expected, Buffer.from(signature, 'base64url'))) return refused('the signature does not match');
  const body = jsonOf(claims) as { exp?: unknown; iat?: unknown } | undefined;
  const leewayMs = (spec.timestamp?.toleranceSeconds ?? 60) * 1000;
  if (typeof body?.exp !== 'number') return refused('the token has no exp');
  if (body.exp * 1000 + leewayMs < nowMs) return refused('the token has expired');
  if (body.iat !== undefined && (typeof body.iat !== 'number' || body.iat * 1000 - leewayMs > nowMs))
    return refused('the token is issued in the future');
  return { ok: true };
}

function jsonOf(base64url: string): unknown {
  try {
    return JSON.parse(Buffer.from(base64url, 'base64url').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** The bytes a template names: `{body}` (raw), `{method}`, `{url}`, `{header:NAME}`; other text as is. */
export function signedContent(template: string, req: Pick<ReceivedRequest, 'method' | 'url' | 'headers' | 'body'>): Buffer {
  const parts: Buffer[] = [];
  const token = /\{(body|method|url|header:[a-z0-9-]+)\}/g;
  let at = 0;
  for (let m = token.exec(template); m; m = token.exec(template)) {
    parts.push(Buffer.from(template.slice(at, m.index)));
    const name = m[1]!;
    if (name === 'body') parts.push(req.body);
    else if (name === 'method') parts.push(Buffer.from(req.method.toUpperCase()));
    else if (name === 'url') parts.push(Buffer.from(req.url));
    else parts.push(Buffer.from(req.headers[name.slice('header:'.length)] ?? ''));
    at = m.index + m[0].length;
  }
  parts.push(Buffer.from(template.slice(at)));
  return Buffer.concat(parts);
}

function outsideWindow(ts: NonNullable<WebhookSignatureSpec['timestamp']>, value: string | undefined, nowMs: number): string | undefined {
  if (!value || !/^\d{1,16}$/.test(value)) return 'no valid timestamp';
  const ms = ts.unit === 'milliseconds' ? Number(value) : Number(value) * 1000;
  if (Math.abs(nowMs - ms) > ts.toleranceSeconds * 1000) return `the timestamp is more than ${ts.toleranceSeconds} s from now`;
  return undefined;
}

function decode(text: string, encoding: 'hex' | 'base64'): Buffer {
  if (encoding === 'hex') return /^[0-9a-fA-F]*$/.test(text) ? Buffer.from(text, 'hex') : Buffer.alloc(0);
  return Buffer.from(text, 'base64');
}

function sameDigest(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}
