import type { IntegrationResource } from '../../k8s/resources.js';

/**
 * Annotation on an Integration: the provider refused its client at the token endpoint (written by
 * the refresher, which does not own the Integration's conditions; the Integration reconciler reads
 * it into `Ready=False, ClientRejected`). It names the Integration generation and client Secret
 * version it was seen with: once either changes, the fault is considered fixed and refreshes resume.
 */
export const CLIENT_FAULT_ANNOTATION = 'latchkey.dev/client-fault';

export interface ClientFault {
  /** metadata.generation of the Integration when the provider refused it. */
  generation: number;
  /** resourceVersion of its client Secret then ('' when it has none). */
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
