/**
 * The rules for a connection's credentials and the status fields that follow from them, in one
 * place: the connection service (create, import, re-authorize) and the token refresher both apply
 * them, so a connection looks the same whichever path wrote its credentials last.
 */
import { expiresAtOf, lifetimeSecondsOf } from './credentials.js';
import { nextRefreshAt, type RefreshSettings } from './refresh-margin.js';

type AnyCredentials = { type: string } & Record<string, unknown>;

/** Whether retrying a failed refresh can help (transient) or the end user must authorize again (permanent). */
export type RefreshFailureKind = 'permanent' | 'transient';

/** One entry of a connection's `status.errors` (the log record is the Event named `logId`). */
export interface StatusErrorEntry {
  type: string;
  logId: string;
  message?: string;
  occurredAt?: string;
  /** Set on refresh failures: how other replicas waiting for the same refresh learn its outcome. */
  refreshFailure?: RefreshFailureKind;
}

/** The status fields these rules own. */
export interface CredentialStatus {
  expiresAt?: string;
  nextRefreshAt?: string;
  lastRefreshedAt?: string;
  refreshAttempts?: number;
  updatedAt?: string;
  errors?: StatusErrorEntry[];
}

/** `errors[].type` of failures with the credentials themselves; new credentials clear them. */
export const CREDENTIALS_ERROR = 'auth';
/** How many error entries a status keeps (the oldest go first). */
export const MAX_STATUS_ERRORS = 10;

/**
 * The status after new credentials were stored (created, imported, re-authorized or refreshed):
 * expiry and next refresh recomputed from them (absent when they do not expire), attempts reset,
 * errors about the old credentials cleared. Other fields (conditions, lastFetchedAt) are kept.
 */
export function statusAfterNewCredentials<S extends CredentialStatus>(
  status: S | undefined,
  credentials: AnyCredentials,
  settings: RefreshSettings,
  now: number,
  how: 'authorized' | 'refreshed',
): S {
  const next = { ...status, refreshAttempts: 0, updatedAt: new Date(now).toISOString() } as S;
  const expiresAt = expiresAtOf(credentials);
  if (expiresAt) {
    next.expiresAt = expiresAt.toISOString();
    next.nextRefreshAt = nextRefreshAt(expiresAt, lifetimeSecondsOf(credentials), settings).toISOString();
  } else {
    delete next.expiresAt;
    delete next.nextRefreshAt;
  }
  if (how === 'refreshed') next.lastRefreshedAt = next.updatedAt;
  if (status?.errors) next.errors = status.errors.filter((e) => e.type !== CREDENTIALS_ERROR);
  return next;
}

/**
 * Credentials that replace `current`: `incoming` as sent, except that a provider that sends no
 * refresh token (many do not on refresh, some not on a repeated consent) leaves the old one in
 * place, since it is still valid and the only way to renew the new access token.
 */
export function mergeCredentials<C extends AnyCredentials>(current: AnyCredentials | undefined, incoming: C): C {
  if (!current || current.type !== incoming.type) return incoming;
  if (incoming.refresh_token !== undefined || current.refresh_token === undefined) return incoming;
  return { ...incoming, refresh_token: current.refresh_token };
}

/** The status after a failed refresh: one more attempt, and the failure appended to the errors. */
export function statusAfterRefreshFailure<S extends CredentialStatus>(status: S, entry: StatusErrorEntry): S {
  return {
    ...status,
    refreshAttempts: (status.refreshAttempts ?? 0) + 1,
    errors: [...(status.errors ?? []), entry].slice(-MAX_STATUS_ERRORS),
  };
}

/** A refresh failure recorded since `known` (log IDs seen before), e.g. by the replica that held the lock. */
export function newRefreshFailure(status: CredentialStatus | undefined, known: ReadonlySet<string>): StatusErrorEntry | undefined {
  return (status?.errors ?? []).find((e) => e.refreshFailure !== undefined && !known.has(e.logId));
}
