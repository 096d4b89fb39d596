/** A certificate Secret as an Integration's `clientCertificateRef` names it (labelled so Latchkey reads it). */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { LABELS } from '../../src/k8s/resources.js';

/** `certificate`: a kubernetes.io/tls Secret of its `tls.crt`/`tls.key`; other data: an Opaque Secret of it as given. */
export async function createCertificateSecret(
  kc: KubeConfig,
  namespace: string,
  name: string,
  certificate: { cert: string; key: string } | Record<string, string>,
): Promise<void> {
  const tls = typeof certificate.cert === 'string' && typeof certificate.key === 'string' && Object.keys(certificate).length === 2;
  await kc.makeApiClient(CoreV1Api).createNamespacedSecret({
    namespace,
    body: {
      metadata: { name, labels: { [LABELS.watch]: 'true' } },
      type: tls ? 'kubernetes.io/tls' : 'Opaque',
      stringData: tls ? { 'tls.crt': certificate.cert!, 'tls.key': certificate.key! } : certificate,
    },
  });
}
