import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 over
 * `${webhook-id}.${webhook-timestamp}.${body}`, sent as `webhook-signature: v1,<base64>`.
 * A signing key written as `whsec_<base64>` is used as the base64-decoded bytes (as the Standard
 * Webhooks libraries do); any other string is used as its UTF-8 bytes.
 */
export function signingKeyBytes(key: string): Buffer {
  return key.startsWith('whsec_') ? Buffer.from(key.slice('whsec_'.length), 'base64') : Buffer.from(key, 'utf8');
}

export function signPayload(key: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', signingKeyBytes(key)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export function webhookHeaders(key: string, id: string, timestampSeconds: number, body: string): WebhookHeaders {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signPayload(key, id, timestampSeconds, body),
  };
}

/**
 * Receiver-side check (used by tests and as a reference for applications): a valid `v1` signature
 * among the space-separated ones, and a timestamp within `toleranceSeconds` of now.
 */
export function verifyWebhook(
  key: string,
  headers: Record<string, string | undefined>,
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const id = headers['webhook-id'];
  const ts = Number(headers['webhook-timestamp']);
  const sigs = headers['webhook-signature'];
  if (!id || !Number.isInteger(ts) || !sigs || Math.abs(nowSeconds - ts) > toleranceSeconds) return false;
  const expected = Buffer.from(signPayload(key, id, ts, body));
  return sigs.split(' ').some((s) => {
    const candidate = Buffer.from(s);
    return candidate.length === expected.length && timingSafeEqual(candidate, expected);
  });
}

/**
 * Nango's signature (`X-Nango-Hmac-Sha256`): the hex HMAC-SHA256 of the raw body, keyed with the
 * signing key's UTF-8 bytes as written (`whsec_` included), which is how Nango's SDKs verify it
 * (`verifyIncomingWebhookRequest`, given the same string as `webhookSigningKey`).
 */
export function nangoSignature(key: string, body: string): string {
  return createHmac('sha256', key).update(body).digest('hex');
}
