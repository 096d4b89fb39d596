import type { StoredConnection } from '../../k8s/store.js';

/**
 * Annotation on a Connection: the credentials Secret resourceVersion the provider refused for good
 * (written by the refresh scheduler). A different version means new credentials.
 */
export const REAUTH_VERSION_ANNOTATION = 'latchkey.dev/reauthorization-credentials-version';

/**
 * True while the stored credentials are the ones a permanent refresh failure was recorded for: the
 * annotation names the credentials Secret's current version (a re-authorization or an import writes
 * new credentials, which lifts it). Nothing calls the provider with such credentials again; the
 * connection reconciler shows it as the `NeedsReauthorization` condition.
 */
export function needsReauthorization(conn: StoredConnection): boolean {
  const failedVersion = conn.resource.metadata.annotations?.[REAUTH_VERSION_ANNOTATION];
  return failedVersion !== undefined && failedVersion === conn.credentialsVersion;
}

/**
 * What the operator and the application backend are told when the provider refused a connection's
 * credentials for good (`detail`: the provider's answer, which carries no credential).
 */
export function reauthorizationMessage(spec: { connectionId: string; integration: string }, detail: string | undefined): string {
  return (
    `The provider refused to renew the access token${detail ? ` (${detail})` : ''}. Latchkey has stopped ` +
    `refreshing this connection. The end user must authorize again: create a reconnect session for ` +
    `connection "${spec.connectionId}" of integration "${spec.integration}".`
  );
}
