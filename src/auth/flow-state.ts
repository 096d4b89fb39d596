import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deriveKey, type SessionClaims } from './session-tokens.js';

/**
 * What an authorization flow must remember between the redirect to the provider and the callback.
 * It travels sealed (AES-256-GCM under a key derived from the Environment's secret key) inside the
 * OAuth `state` parameter, so any replica can finish the flow and nobody can read or alter it; the
 * PKCE verifier inside never reaches the provider. Single use is enforced separately, by a marker in
 * the cluster keyed by `fid` (see FlowRecords).
 */
export interface FlowState {
  /** Namespace of the Environment (also in clear in the sealed value, to find the key). */
  namespace: string;
  /** The connect session this flow belongs to. */
  sid: string;
  /** Random ID of this flow attempt: the single-use key. */
  fid: string;
  mode: 'OAUTH2' | 'OAUTH1';
  integration: string;
  endUser: SessionClaims['endUser'];
  reconnect?: SessionClaims['reconnect'];
  /** Connection configuration the end user entered before the redirect (templated URLs). */
  connectionConfig: Record<string, string>;
  /** The redirect URI sent to the provider (the Environment's custom callback URL, or ours). */
  redirectUri: string;
  codeVerifier?: string;
  /** OAuth 1.0a: the request token the provider will send back. */
  requestToken?: string;
  /** Expiry, seconds since the epoch: the session's. */
  exp: number;
}

const PREFIX = 'lkf1';
const PURPOSE = 'oauth-flow-state';

export function newFlowId(): string {
  return randomBytes(16).toString('base64url');
}

export function sealFlowState(state: FlowState, environmentSecretKey: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', deriveKey(environmentSecretKey, PURPOSE), iv);
  cipher.setAAD(Buffer.from(state.namespace));
  const body = Buffer.concat([cipher.update(JSON.stringify(state), 'utf8'), cipher.final()]);
  const ns = Buffer.from(state.namespace, 'utf8').toString('base64url');
  return `${PREFIX}.${ns}.${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
}

/** The namespace a state value claims (unverified: it selects the key that verifies it). */
export function flowStateNamespace(value: string): string | undefined {
  const parts = value.split('.');
  if (parts.length !== 3 || parts[0] !== PREFIX) return undefined;
  const ns = Buffer.from(parts[1]!, 'base64url').toString('utf8');
  return /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(ns) ? ns : undefined;
}

export type OpenFlowResult = { ok: true; state: FlowState } | { ok: false; reason: 'malformed' | 'invalid' | 'expired' };

export function openFlowState(value: string, environmentSecretKey: string, nowMs: number): OpenFlowResult {
  const namespace = flowStateNamespace(value);
  if (!namespace) return { ok: false, reason: 'malformed' };
  const raw = Buffer.from(value.split('.')[2]!, 'base64url');
  if (raw.length < 12 + 16 + 2) return { ok: false, reason: 'malformed' };
  try {
    const decipher = createDecipheriv('aes-256-gcm', deriveKey(environmentSecretKey, PURPOSE), raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(namespace));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    const json = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString('utf8');
    const state = JSON.parse(json) as FlowState;
    if (state.namespace !== namespace) return { ok: false, reason: 'invalid' };
    if (state.exp * 1000 <= nowMs) return { ok: false, reason: 'expired' };
    return { ok: true, state };
  } catch {
    return { ok: false, reason: 'invalid' };
  }
}
