import { nextRefreshAt } from '../auth/refresh/token-refresher.js';
import type { Config } from '../platform/config.js';
import { expiresAtOf, lifetimeSecondsOf } from '../domain/credentials.js';
import { floorUntil } from '../domain/refresh-floor.js';
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

/**
 * The refresh floor applied to a planned refresh time (src/domain/refresh-floor.ts): `due` itself,
 * unless the token has lived shorter than the floor since its last refresh (`lastRefreshAt`): then no
 * sooner than a floor after that refresh.
 */
export function flooredRefreshTime(
  due: number,
  credentials: StoredCredentials,
  lastRefreshAt: number | undefined,
  floorMs: number,
): number {
  const until = floorUntil(credentialsExpiry(credentials), lastRefreshAt, floorMs);
  return until !== undefined && until > due ? until : due;
}
