/**
 * The Integration reconciler's verdict on Providers that require a TLS client certificate (mutual TLS), against a
 * real control plane: the Integration names a kubernetes.io/tls Secret (`clientCertificateRef`) holding a
 * certificate and its key; a missing reference, a Secret without the keys, a key that is not the certificate's,
 * each named clearly, and never with the key's text.
 */
import { testKubeConfig } from '../../dev/cluster.js';
import { createIntegration } from '../../dev/fixtures.js';
import { startControllerBed, type ControllerBed } from '../support/controller-bed.js';
import { createCertificateSecret } from '../support/tls-secrets.js';
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

const tlsSecret = (name: string, data: Record<string, string>) => createCertificateSecret(kc, bed.ns.name, name, data);

beforeAll(async () => {
  bed = await startControllerBed(kc, 'mtls-conditions');
});

afterAll(async () => {
  await bed?.close();
});

const integrationReady = async (name: string, reason: string) => (await bed.readyOf('integrations', name, reason)).ready;

/** An Integration of `provider` naming the certificate Secret `secret` (none: no clientCertificateRef). */
const certifiedIntegration = (name: string, provider: string, secret?: string) =>
  createIntegration(
    kc,
    bed.ns.name,
    name,
    { provider, ...(secret ? { clientCertificateRef: { name: secret } } : {}) },
    { clientId: 'c', clientSecret: 's' },
  );

describe('Integrations of Providers that require a client certificate', () => {
  it('clientCertificate: Ready with a certificate and its key; without clientCertificateRef, says to set it', async () => {
    const p = await bed.provider('mtls-cc', spec({ tokenRequestAuthMethod: 'basic', clientCertificate: { apiCalls: true } }));
    await createCertificateSecret(kc, bed.ns.name, 'issued-cert', issued);
    await certifiedIntegration('certified', p, 'issued-cert');
    expect((await integrationReady('certified', 'Ready')).status).toBe('True');

    await certifiedIntegration('no-ref', p);
    const missing = await integrationReady('no-ref', 'ClientCertificateRefMissing');
    expect(missing.status).toBe('False');
    expect(missing.message).toContain('set spec.clientCertificateRef');
  });

  it('tls_client_auth: names a missing key, a key not of the certificate, and an absent Secret, without key text', async () => {
    const p = await bed.provider('mtls-tls', spec({ tokenRequestAuthMethod: 'tls_client_auth' }));
    await tlsSecret('cert-only', { 'tls.crt': issued.cert });
    await certifiedIntegration('cert-only', p, 'cert-only');
    expect((await integrationReady('cert-only', 'SecretKeyMissing')).message).toContain('lacks "tls.key"');

    await tlsSecret('mismatched', { 'tls.crt': issued.cert, 'tls.key': other.key });
    await certifiedIntegration('mismatched', p, 'mismatched');
    const mismatched = await integrationReady('mismatched', 'InvalidClientCertificate');
    expect(mismatched.message).toContain('is not the key of the certificate');
    expect(mismatched.message).not.toContain('PRIVATE KEY');

    await tlsSecret('not-pem', { 'tls.crt': 'not-a-certificate-text', 'tls.key': issued.key });
    await certifiedIntegration('not-pem', p, 'not-pem');
    const notPem = await integrationReady('not-pem', 'InvalidClientCertificate');
    expect(notPem.message).toContain('"tls.crt" is not a PEM certificate');
    expect(notPem.message).not.toContain('not-a-certificate-text');

    await certifiedIntegration('absent', p, 'no-such-secret');
    expect((await integrationReady('absent', 'SecretNotFound')).message).toContain(
      '"no-such-secret" (spec.clientCertificateRef) does not exist',
    );
  });
});
