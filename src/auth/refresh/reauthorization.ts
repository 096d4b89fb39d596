import type { StoredConnection } from '../../k8s/store.js';

/** Condition type set on a Connection whose provider refused its credentials for good. */
export const NEEDS_REAUTHORIZATION = 'NeedsReauthorization';
export const REAUTHORIZATION_REQUIRED = 'ReauthorizationRequired';
/** Credentials Secret resourceVersion that failed for good; a different version means new credentials. */
export const REAUTH_VERSION_ANNOTATION = 'latchkey.dev/reauthorization-credentials-version';

/**
 * True while the stored credentials are the ones a permanent refresh failure was recorded for: the
 * condition is set and the credentials Secret has not changed since (a re-authorization or an import
 * writes new credentials, which lifts it). Nothing calls the provider with such credentials again.
 */
export function needsReauthorization(conn: StoredConnection): boolean {
  const condition = conn.resource.status?.conditions?.find((c) => c.type === NEEDS_REAUTHORIZATION);
  if (condition?.status !== 'True') return false;
  const failedVersion = conn.resource.metadata.annotations?.[REAUTH_VERSION_ANNOTATION];
  return failedVersion === undefined || failedVersion === conn.credentialsVersion;
}
