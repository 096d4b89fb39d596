/**
 * The refresh floor: a token the provider gives a lifetime shorter than the floor (`expires_in: 0`,
 * or 1) is refreshed at most once per floor per connection. Without it such a token would be
 * "about to expire" again as soon as it was stored, and every plan and every fetch would refresh it:
 * a token call and an API-server write a second, forever. Under the floor it is used as it is
 * (possibly expired: the provider's choice) until the floor has passed since the last refresh.
 */

/** A lifetime below this many seconds is short (Config.refreshFloorSeconds; 0 turns the floor off). */
export interface FloorSettings {
  refreshFloorSeconds: number;
}

/** Whether a token stored at `storedAt` (ms) and expiring at `expiresAt` (ms) lives shorter than the floor. */
export function isShortLived(expiresAt: number, storedAt: number, floorMs: number): boolean {
  return floorMs > 0 && expiresAt - storedAt < floorMs;
}

/**
 * The earliest time (ms) the next refresh may start under the floor, or undefined when the floor does
 * not apply: no known last refresh, no expiry, or a token that lives at least the floor.
 */
export function floorUntil(expiresAt: number | undefined, lastRefreshAt: number | undefined, floorMs: number): number | undefined {
  if (expiresAt === undefined || lastRefreshAt === undefined || !Number.isFinite(lastRefreshAt)) return undefined;
  return isShortLived(expiresAt, lastRefreshAt, floorMs) ? lastRefreshAt + floorMs : undefined;
}

/** A refresh this process made: when, and the credentials version it wrote. */
export interface RefreshRecord {
  at: number;
  credentialsVersion: string;
}

/**
 * When the stored credentials were last refreshed (ms), if they come from a refresh: the status's
 * `lastRefreshedAt` unless credentials were stored since (authorized, imported: a later `updatedAt`),
 * and a refresh this process remembers for the same credentials version (the status write trails it).
 */
export function lastRefreshOf(
  status: { lastRefreshedAt?: string; updatedAt?: string } | undefined,
  credentialsVersion: string,
  remembered?: RefreshRecord,
): number | undefined {
  const refreshed = Date.parse(status?.lastRefreshedAt ?? '');
  const updated = Date.parse(status?.updatedAt ?? '');
  let fromStatus = Number.isFinite(refreshed) && !(updated > refreshed) ? refreshed : undefined;
  if (remembered) {
    if (remembered.credentialsVersion === credentialsVersion) return Math.max(fromStatus ?? -Infinity, remembered.at);
    // The credentials changed since this process refreshed them: a status no newer speaks of older ones too.
    if (fromStatus !== undefined && fromStatus <= remembered.at) fromStatus = undefined;
  }
  return fromStatus;
}
