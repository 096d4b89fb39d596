import { createHash } from 'node:crypto';
import { LatchkeyError } from '../domain/errors.js';
import type { ConnectionScans } from '../k8s/store.js';

/**
 * Label on Connections created through a Connect session: a digest of the session ID (the token's
 * `sid`, never the token). Counting them caps how many connections one session token can create,
 * on every replica, from the cache everyone shares.
 */
export const SESSION_LABEL = 'latchkey.dev/connect-session';

export function sessionLabelValue(sid: string): string {
  return createHash('sha256').update(sid).digest('hex').slice(0, 32);
}

/**
 * Refuses a new connection when the session already created `max` (0: no cap). Two requests at the
 * same instant may both pass; the per-session rate limit keeps that overshoot small.
 */
export async function checkSessionQuota(scans: ConnectionScans, namespace: string, sid: string, max: number): Promise<void> {
  if (max <= 0) return;
  const value = sessionLabelValue(sid);
  let made = 0;
  for await (const _ of scans.scanConnections(namespace, { labels: { [SESSION_LABEL]: value } })) if (++made >= max) break;
  if (made >= max) {
    throw new LatchkeyError(
      'forbidden',
      'session_connection_limit',
      `This connect session has already created ${made} connections, the most one session may create. Ask the application for a new link.`,
    );
  }
}
