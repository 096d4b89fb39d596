import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { sealedKind } from './sealed-values.js';
import type { SessionClaims } from './session-tokens.js';
import type { AuthMode } from '../domain/auth-modes.js';

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
  /** The Provider's auth mode: its module's redirect flow completes the callback (src/modes). */
  mode: AuthMode;
  integration: string;
  endUser: SessionClaims['endUser'];
  reconnect?: SessionClaims['reconnect'];
  /** Connection configuration the end user entered before the redirect (templated URLs). */
  connectionConfig: Record<string, string>;
  /** The redirect URI sent to the provider (the Environment's custom callback URL, or ours). */
  redirectUri: string;
  codeVerifier?: string;
  /** The session's scopes for this integration, asked for instead of the Integration's (OAuth 2). */
  scopes?: string[];
  /** The session's extra authorization parameters for this integration (OAuth 2). */
  authorizationParams?: Record<string, string>;
  /** APP / CUSTOM: when the flow started (ms): a new installation must not be older. */
  startedAt?: number;
  /**
   * An authorization server discovered at the start (MCP_OAUTH2): where the callback's code is
   * exchanged, for which resource, by which client; sealed, so the callback trusts it.
   */
  authorizationServer?: DiscoveredAuthorizationServer;
  /** OAuth 1.0a: the request token the provider will send back. */
  requestToken?: string;
  /**
   * SHA-256 (base64url) of the browser binding: the random value in an HttpOnly cookie of the browser
   * that started the flow. A callback in any other browser lacks it (login CSRF / connection fixation).
   */
  bh: string;
  /** Expiry, seconds since the epoch: the session's. */
  exp: number;
}

/** What a flow discovered about its authorization server (RFC 8414 metadata) and the client it uses there. */
export interface DiscoveredAuthorizationServer {
  issuer: string;
  tokenEndpoint: string;
  /** RFC 9207: the server sends `iss` on the authorization response. */
  issParameter: boolean;
  /** The resource (RFC 8707) the tokens are asked for. */
  resource: string;
  clientId: string;
  /** How the client came to be: the Integration's, a Client ID Metadata Document, or RFC 7591 registration. */
  clientRegistration: 'pre-registered' | 'metadata-document' | 'dynamic';
  /** The token endpoint's client authentication (`none` for public clients). */
  tokenEndpointAuthMethod: 'none' | 'client_secret_post' | 'client_secret_basic';
  scope?: string;
}

const PREFIX = 'lkf1';
const PURPOSE = 'oauth-flow-state';

export function newFlowId(): string {
  return randomBytes(16).toString('base64url');
}

const sealed = sealedKind<FlowState>(PURPOSE, PREFIX);

export function sealFlowState(state: FlowState, environmentSecretKey: string): string {
  return sealed.seal(state, environmentSecretKey);
}

/** The namespace a state value claims (unverified: it selects the key that verifies it). */
export const flowStateNamespace = (value: string): string | undefined => sealed.namespaceOf(value);

export type OpenFlowResult = { ok: true; state: FlowState } | { ok: false; reason: 'malformed' | 'invalid' | 'expired' };

export function openFlowState(value: string, environmentSecretKey: string, nowMs: number): OpenFlowResult {
  const result = sealed.open(value, environmentSecretKey, nowMs);
  return result.ok ? { ok: true, state: result.value } : result;
}

export function newBrowserBinding(): string {
  return randomBytes(32).toString('base64url');
}

const BINDING = /^[A-Za-z0-9_-]{43}$/;

/** Whether a value has the shape of a browser binding (anything else from a cookie is ignored). */
export function isBrowserBinding(value: string | undefined): value is string {
  return typeof value === 'string' && BINDING.test(value);
}

export function browserBindingHash(binding: string): string {
  return createHash('sha256').update(binding, 'utf8').digest('base64url');
}

/** Whether the callback's browser holds the binding the flow was started with (constant time). */
export function browserBindingMatches(state: FlowState, binding: string | undefined): boolean {
  if (!isBrowserBinding(binding) || typeof state.bh !== 'string') return false;
  const expected = Buffer.from(state.bh, 'utf8');
  const actual = Buffer.from(browserBindingHash(binding), 'utf8');
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
