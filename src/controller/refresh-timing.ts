import type { StoredCredentials } from '../k8s/store.js';
import type { ConnectionResource } from '../k8s/resources.js';

/** Auth modes whose tokens the controller renews before they expire. */
export const REFRESHABLE_MODES = new Set(['OAUTH2', 'OAUTH2_CC', 'APP']);

/** Expiry of the stored access token (ms since epoch), or undefined when it never expires. */
export function credentialsExpiry(credentials: StoredCredentials): number | undefined {
  const raw = credentials.expires_at ?? credentials.expiresAt;
  if (raw === undefined || raw === null || raw === '') return undefined;
  const ms = typeof raw === 'number' ? (raw < 1e12 ? raw * 1000 : raw) : Date.parse(String(raw));
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * Whether the controller can renew this connection's token at all: an OAuth 2 token needs a refresh
 * token; client-credentials and app-installation tokens are minted again from the integration's keys.
 */
export function canRenew(mode: string, credentials: StoredCredentials): boolean {
  if (!REFRESHABLE_MODES.has(mode) || credentials.type !== mode) return false;
  if (mode === 'OAUTH2') return typeof credentials.refresh_token === 'string' && credentials.refresh_token.length > 0;
  return true;
}

/** When the current token was obtained, as well as the connection tells (for its lifetime). */
export function issuedAt(resource: ConnectionResource, credentials: StoredCredentials): number | undefined {
  const candidates = [credentials.obtained_at, credentials.obtainedAt, resource.status?.lastRefreshedAt, resource.status?.updatedAt, resource.metadata.creationTimestamp];
  for (const c of candidates) {
    if (c === undefined || c === null) continue;
    const ms = c instanceof Date ? c.getTime() : Date.parse(String(c));
    if (Number.isFinite(ms)) return ms;
  }
  return undefined;
}

export interface MarginSettings {
  refreshMarginSeconds: number;
  refreshMarginRatio: number;
}

/**
 * How long before expiry to refresh: min(marginSeconds, lifetime × ratio). With the defaults (300 s,
 * 0.25) a 60-day token is renewed 5 minutes early, a 5-minute token 75 s early, a 10-second token
 * 2.5 s early. With no known lifetime, the fixed margin.
 */
export function refreshMarginMs(lifetimeMs: number | undefined, settings: MarginSettings): number {
  const fixed = settings.refreshMarginSeconds * 1000;
  if (lifetimeMs === undefined || !Number.isFinite(lifetimeMs) || lifetimeMs <= 0) return fixed;
  return Math.min(fixed, lifetimeMs * settings.refreshMarginRatio);
}

/** When to refresh a token that expires at `expiresAt` and was issued at `issuedAtMs`. */
export function nextRefreshTime(expiresAt: number, issuedAtMs: number | undefined, settings: MarginSettings): number {
  const lifetime = issuedAtMs === undefined ? undefined : expiresAt - issuedAtMs;
  return Math.floor(expiresAt - refreshMarginMs(lifetime, settings));
}
