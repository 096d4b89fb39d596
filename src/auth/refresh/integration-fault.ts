import type { IntegrationResource } from '../../k8s/resources.js';

/**
 * Annotation on an Integration: the provider refused its client at the token endpoint (written by
 * the refresher, which does not own the Integration's conditions; the Integration reconciler reads
 * it into `Ready=False, ClientRejected`). It names the Integration generation and the versions of its
 * Secrets it was seen with ({@link secretsVersion}): once one changes, the fault is considered fixed and
 * refreshes resume.
 */
export const CLIENT_FAULT_ANNOTATION = 'latchkey.dev/client-fault';

export interface ClientFault {
  /** metadata.generation of the Integration when the provider refused it. */
  generation: number;
  /** {@link secretsVersion} then: its client Secret's resourceVersion, and its certificate Secret's. */
  secretVersion: string;
  /** What the token endpoint said: OAuth error and HTTP status; never a credential. */
  detail: string;
  at: string;
}

export function encodeClientFault(fault: ClientFault): string {
  return JSON.stringify(fault);
}

/** The recorded fault if it still applies to this Integration generation and Secret version. */
export function currentClientFault(integration: IntegrationResource, secretVersion: string | undefined): ClientFault | undefined {
  const raw = integration.metadata.annotations?.[CLIENT_FAULT_ANNOTATION];
  if (!raw) return undefined;
  let fault: ClientFault;
  try {
    fault = JSON.parse(raw) as ClientFault;
  } catch {
    return undefined;
  }
  if (fault.generation !== (integration.metadata.generation ?? 0) || fault.secretVersion !== (secretVersion ?? '')) return undefined;
  return fault;
}

/**
 * What a fault is fenced on besides the generation: the client Secret's resourceVersion ('' when it has
 * none), and the certificate Secret's after a slash when the Integration names one (an expired client
 * certificate is fixed by replacing that Secret alone).
 */
export function secretsVersion(integration: IntegrationResource, versionOf: (secret: string) => string | undefined): string {
  const client = integration.spec.clientSecretRef?.name;
  const certificate = integration.spec.clientCertificateRef?.name;
  const version = client ? (versionOf(client) ?? '') : '';
  return certificate ? `${version}/${versionOf(certificate) ?? ''}` : version;
}
