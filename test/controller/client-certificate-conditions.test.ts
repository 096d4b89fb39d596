/**
 * The Integration reconciler's verdict on Providers that require a TLS client certificate (mutual TLS), against a
 * real control plane: the Integration names a kubernetes.io/tls Secret (`clientCertificateRef`) holding a
 * certificate and its key; a missing reference, a Secret without the keys, a key that is not the certificate's,
 * each named clearly, and never with the key's text.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { testKubeConfig } from '../../dev/cluster.js';
import { createIntegration } from '../../dev/fixtures.js';
import { LABELS } from '../../src/k8s/resources.js';
import { startControllerBed, type ControllerBed } from '../support/controller-bed.js';
import { makeClientCertificate } from '../support/test-ca.js';

const kc = testKubeConfig();
let bed: ControllerBed;
const issued = makeClientCertificate('latchkey-conditions');
const other = makeClientCertificate('someone-else');

const spec = (extra: Record<string, unknown>) => ({
  displayName: 'Certified client',
  authMode: 'OAUTH2_CC' as const,
  tokenUrl: 'https://auth.example.test/token',
  ...extra,
});

async function tlsSecret(name: string, data: Record<string, string>): Promise<void> {
  await kc.makeApiClient(CoreV1Api).createNamespacedSecret({
    namespace: bed.ns.name,
    body: { metadata: { name, labels: { [LABELS.watch]: 'true' } }, type: 'Opaque', stringData: data },
  });
}

beforeAll(async () => {
  bed = await startControllerBed(kc, 'mtls-conditions');
});

afterAll(async () => {
  await bed?.close();
});

const integrationReady = async (name: string, reason: string) => (await bed.readyOf('integrations', name, reason)).ready;

describe('Integrations of Providers that require a client certificate', () => {
  it('clientCertificate: Ready with a certificate and its key; without clientCertificateRef, says to set it', async () => {
    const p = await bed.provider('mtls-cc', spec({ tokenRequestAuthMethod: 'basic', clientCertificate: { apiCalls: true } }));
    await kc.makeApiClient(CoreV1Api).createNamespacedSecret({
      namespace: bed.ns.name,
      body: {
        metadata: { name: 'issued-cert', labels: { [LABELS.watch]: 'true' } },
        type: 'kubernetes.io/tls',
        stringData: { 'tls.crt': issued.cert, 'tls.key': issued.key },
      },
    });
    await createIntegration(
      kc,
      bed.ns.name,
      'certified',
      { provider: p, clientCertificateRef: { name: 'issued-cert' } },
      { clientId: 'c', clientSecret: 's' },
    );
    expect((await integrationReady('certified', 'Ready')).status).toBe('True');

    await createIntegration(kc, bed.ns.name, 'no-ref', { provider: p }, { clientId: 'c', clientSecret: 's' });
    const missing = await integrationReady('no-ref', 'ClientCertificateRefMissing');
    expect(missing.status).toBe('False');
    expect(missing.message).toContain('set spec.clientCertificateRef');
  });

  it('tls_client_auth: names a missing key, a key not of the certificate, and an absent Secret, without key text', async () => {
    const p = await bed.provider('mtls-tls', spec({ tokenRequestAuthMethod: 'tls_client_auth' }));
    await tlsSecret('cert-only', { 'tls.crt': issued.cert });
    await createIntegration(
      kc,
      bed.ns.name,
      'cert-only',
      { provider: p, clientCertificateRef: { name: 'cert-only' } },
      { clientId: 'c', clientSecret: 's' },
    );
    expect((await integrationReady('cert-only', 'SecretKeyMissing')).message).toContain('lacks "tls.key"');

    await tlsSecret('mismatched', { 'tls.crt': issued.cert, 'tls.key': other.key });
    await createIntegration(
      kc,
      bed.ns.name,
      'mismatched',
      { provider: p, clientCertificateRef: { name: 'mismatched' } },
      { clientId: 'c', clientSecret: 's' },
    );
    const mismatched = await integrationReady('mismatched', 'InvalidClientCertificate');
    expect(mismatched.message).toContain('is not the key of the certificate');
    expect(mismatched.message).not.toContain('PRIVATE KEY');

    await tlsSecret('not-pem', { 'tls.crt': 'not-a-certificate-text', 'tls.key': issued.key });
    await createIntegration(
      kc,
      bed.ns.name,
      'not-pem',
      { provider: p, clientCertificateRef: { name: 'not-pem' } },
      { clientId: 'c', clientSecret: 's' },
    );
    const notPem = await integrationReady('not-pem', 'InvalidClientCertificate');
    expect(notPem.message).toContain('"tls.crt" is not a PEM certificate');
    expect(notPem.message).not.toContain('not-a-certificate-text');

    await createIntegration(
      kc,
      bed.ns.name,
      'absent',
      { provider: p, clientCertificateRef: { name: 'no-such-secret' } },
      { clientId: 'c', clientSecret: 's' },
    );
    expect((await integrationReady('absent', 'SecretNotFound')).message).toContain(
      '"no-such-secret" (spec.clientCertificateRef) does not exist',
    );
  });
});
