import { expiresAtOf, lifetimeSecondsOf } from './credentials.js';

/** How long before expiry a token is renewed: min(marginSeconds, lifetime × ratio) (see Config). */
export interface RefreshSettings {
  refreshMarginSeconds: number;
  refreshMarginRatio: number;
}

type AnyCredentials = { type: string } & Record<string, unknown>;

/** Margin before expiry at which a token counts as "about to expire": min(marginSeconds, lifetime × ratio). */
export function refreshMarginMs(
  lifetimeSeconds: number | undefined,
  cfg: RefreshSettings,
  marginSeconds = cfg.refreshMarginSeconds,
): number {
  const byRatio = lifetimeSeconds !== undefined ? lifetimeSeconds * cfg.refreshMarginRatio : Infinity;
  return Math.min(marginSeconds, byRatio) * 1000;
}

/** When a token with this expiry (and lifetime, if known) should be refreshed. */
export function nextRefreshAt(expiresAt: Date, lifetimeSeconds: number | undefined, cfg: RefreshSettings): Date {
  return new Date(expiresAt.getTime() - refreshMarginMs(lifetimeSeconds, cfg));
}

/** True when the credentials expire within the margin (false when they have no expiry). */
export function isAboutToExpire(credentials: AnyCredentials, now: number, cfg: RefreshSettings, marginSeconds?: number): boolean {
  const expiresAt = expiresAtOf(credentials);
  if (!expiresAt) return false;
  return expiresAt.getTime() - refreshMarginMs(lifetimeSecondsOf(credentials), cfg, marginSeconds) <= now;
}
