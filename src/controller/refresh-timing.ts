import { nextRefreshAt } from '../auth/refresh/token-refresher.js';
import type { Config } from '../app/config.js';
import { expiresAtOf, lifetimeSecondsOf } from '../domain/credentials.js';
import type { StoredCredentials } from '../k8s/store.js';

export type MarginSettings = Pick<Config, 'refreshMarginSeconds' | 'refreshMarginRatio'>;

/** Expiry of the stored token (ms since epoch), or undefined when it never expires. */
export function credentialsExpiry(credentials: StoredCredentials): number | undefined {
  return expiresAtOf(credentials)?.getTime();
}

/**
 * When the controller refreshes these credentials: expiry − min(marginSeconds, lifetime × ratio),
 * computed by the same helper the shared refresher uses to decide "about to expire", so that a
 * scheduled refresh at that moment is a real refresh and a fetch at that moment joins it.
 */
export function refreshTime(credentials: StoredCredentials, settings: MarginSettings): number | undefined {
  const expiresAt = expiresAtOf(credentials);
  if (!expiresAt) return undefined;
  return nextRefreshAt(expiresAt, lifetimeSecondsOf(credentials), settings).getTime();
}
