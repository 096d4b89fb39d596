/**
 * The handshakes providers make to prove an endpoint before (or while) sending events, answered as
 * their docs say; a handshake is never forwarded. The type is data on the Provider; each answer is code.
 */
import { createHmac } from 'node:crypto';
import type { WebhookHandshakeType } from '../k8s/resources.js';

export interface HandshakeAnswer {
  status: number;
  contentType: 'text/plain' | 'application/json';
  body: string;
}

/** Longest challenge echoed back (the providers' are tens of characters). */
const MAX_CHALLENGE = 1024;

/**
 * Handshakes answered before the signature is checked: Microsoft Graph's validation request is a POST
 * with `?validationToken=` and no notification to sign; the token is echoed as text/plain within 10 s.
 */
export function unsignedHandshake(type: WebhookHandshakeType | undefined, query: URLSearchParams): HandshakeAnswer | undefined {
  if (type !== 'graph-validation-token') return undefined;
  const token = query.get('validationToken');
  if (token === null || token.length > MAX_CHALLENGE) return undefined;
  return { status: 200, contentType: 'text/plain', body: token };
}

/** Handshakes the provider signs like its events: answered once the signature holds. */
export function signedHandshake(type: WebhookHandshakeType | undefined, json: unknown, secret: string): HandshakeAnswer | undefined {
  if (!json || typeof json !== 'object' || Array.isArray(json)) return undefined;
  const body = json as Record<string, unknown>;
  if (type === 'slack-url-verification' && body.type === 'url_verification') {
    // Slack: answer the `challenge` value, plain text being one of the documented forms.
    const challenge = body.challenge;
    if (typeof challenge !== 'string' || challenge.length > MAX_CHALLENGE) return undefined;
    return { status: 200, contentType: 'text/plain', body: challenge };
  }
  if (type === 'zoom-url-validation' && body.event === 'endpoint.url_validation') {
    // Zoom: `plainToken` back with `encryptedToken`, the hex HMAC-SHA256 of it under the secret token.
    const plainToken = (body.payload as Record<string, unknown> | undefined)?.plainToken;
    if (typeof plainToken !== 'string' || plainToken.length > MAX_CHALLENGE) return undefined;
    const encryptedToken = createHmac('sha256', secret).update(plainToken).digest('hex');
    return { status: 200, contentType: 'application/json', body: JSON.stringify({ plainToken, encryptedToken }) };
  }
  return undefined;
}
