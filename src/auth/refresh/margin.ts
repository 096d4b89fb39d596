import type { Config } from '../../app/config.js';
import { expiresAtOf, lifetimeSecondsOf } from '../../domain/credentials.js';
import type { StoredCredentials } from '../../k8s/store.js';

/** Margin before expiry at which a token counts as "about to expire": min(marginSeconds, lifetime × ratio). */
export function refreshMarginMs(
  lifetimeSeconds: number | undefined,
  cfg: Pick<Config, 'refreshMarginSeconds' | 'refreshMarginRatio'>,
  marginSeconds = cfg.refreshMarginSeconds,
): number {
  const byRatio = lifetimeSeconds !== undefined ? lifetimeSeconds * cfg.refreshMarginRatio : Infinity;
  return Math.min(marginSeconds, byRatio) * 1000;
}

/** When a token with this expiry (and lifetime, if known) should be refreshed. */
export function nextRefreshAt(
  expiresAt: Date,
  lifetimeSeconds: number | undefined,
  cfg: Pick<Config, 'refreshMarginSeconds' | 'refreshMarginRatio'>,
): Date {
  return new Date(expiresAt.getTime() - refreshMarginMs(lifetimeSeconds, cfg));
}

/** True when the credentials expire within the margin (false when they have no expiry). */
export function isAboutToExpire(
  credentials: StoredCredentials,
  now: number,
  cfg: Pick<Config, 'refreshMarginSeconds' | 'refreshMarginRatio'>,
  marginSeconds?: number,
): boolean {
  const expiresAt = expiresAtOf(credentials);
  if (!expiresAt) return false;
  return expiresAt.getTime() - refreshMarginMs(lifetimeSecondsOf(credentials), cfg, marginSeconds) <= now;
}
