/**
 * The Integration reconciler's verdict on Providers that authenticate with private_key_jwt, against a real
 * control plane: the Integration's Secret needs the signing key in place of the client secret (and no client
 * ID where the end user types their own, OAUTH2_CC), a key that is not PEM is named without its text. Likewise a
 * Provider whose token requests carry a SAML bearer assertion the Integration signs (RFC 7522: SuccessFactors): the
 * key must be RSA and the certificate beside it its own (an expired one: test/auth/signing-certificate.unit.test.ts).
 */
import { generateKeyPairSync } from 'node:crypto';
import { testKubeConfig } from '../../dev/cluster.js';
import { createIntegration } from '../../dev/fixtures.js';
import { catalogSpec } from '../support/catalog-files.js';
import { startControllerBed, type ControllerBed } from '../support/controller-bed.js';
import { makeClientCertificate, makeRsaSigningCertificate } from '../support/test-ca.js';

const kc = testKubeConfig();
let bed: ControllerBed;

const privateKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const spec = (authMode: 'OAUTH2' | 'OAUTH2_CC') => ({
  displayName: 'Keyed client',
  authMode,
  authorizationUrl: 'https://auth.example.test/authorize',
  tokenUrl: 'https://auth.example.test/token',
  tokenRequestAuthMethod: 'private_key_jwt' as const,
});

beforeAll(async () => {
  bed = await startControllerBed(kc, 'pkj-conditions');
});

afterAll(async () => {
  await bed?.close();
});

const integrationReady = async (name: string, reason: string) => (await bed.readyOf('integrations', name, reason)).ready;

describe('Integrations of private_key_jwt Providers', () => {
  it('OAUTH2_CC: Ready with the key alone (the end user types the client ID); without it, names privateKey', async () => {
    const p = await bed.provider('pkj-cc', spec('OAUTH2_CC'));
    await createIntegration(kc, bed.ns.name, 'key-only', { provider: p }, { privateKey, keyId: 'k1' });
    expect((await integrationReady('key-only', 'Ready')).status).toBe('True');
    await createIntegration(kc, bed.ns.name, 'secret-only', { provider: p }, { clientId: 'c', clientSecret: 'a-client-secret-value' });
    const missing = await integrationReady('secret-only', 'SecretKeyMissing');
    expect(missing.message).toContain('lacks "privateKey"');
    expect(missing.message).not.toContain('a-client-secret-value');
  });

  it('OAUTH2: needs the client ID and the key, and says when the key is not PEM without showing it', async () => {
    const p = await bed.provider('pkj-code', spec('OAUTH2'));
    await createIntegration(kc, bed.ns.name, 'no-id', { provider: p }, { privateKey });
    expect((await integrationReady('no-id', 'SecretKeyMissing')).message).toContain('lacks "clientId"');
    await createIntegration(kc, bed.ns.name, 'bad-key', { provider: p }, { clientId: 'c', privateKey: 'not-a-pem-key-text' });
    const bad = await integrationReady('bad-key', 'InvalidPrivateKey');
    expect(bad.message).toContain('key "privateKey" is not a PEM private key');
    expect(bad.message).not.toContain('not-a-pem-key-text');
  });
});

describe('Integrations of SAML bearer assertion Providers (RFC 7522)', () => {
  const signer = makeRsaSigningCertificate('conditions-signer');
  const other = makeRsaSigningCertificate('conditions-other');
  const ec = makeClientCertificate('conditions-ec');
  const keyLines = (pem: string) => pem.split('\n').filter((l) => l && !l.startsWith('-----'));

  it('the shipped SuccessFactors manifest is Ready; its Integrations need the signing key and its certificate', async () => {
    const p = await bed.provider('sf', catalogSpec('sap-success-factors'));
    expect((await bed.providerReady(p)).status).toBe('True');
    await createIntegration(kc, bed.ns.name, 'sf-key', { provider: p }, { privateKey: signer.key, certificate: signer.cert });
    expect((await integrationReady('sf-key', 'Ready')).status).toBe('True');
    await createIntegration(kc, bed.ns.name, 'sf-secret', { provider: p }, { clientId: 'c', clientSecret: 'a-client-secret-value' });
    const missing = await integrationReady('sf-secret', 'SecretKeyMissing');
    expect(missing.message).toContain('lacks "privateKey" and "certificate"');
    expect(missing.message).toContain('SAML bearer assertions');
    // Without the certificate the end user's administrator has nothing to register: not Ready.
    await createIntegration(kc, bed.ns.name, 'sf-no-cert', { provider: p }, { privateKey: signer.key });
    const noCert = await integrationReady('sf-no-cert', 'SecretKeyMissing');
    expect(noCert.message).toContain('lacks "certificate"');
    expect(noCert.message).toContain('register with the provider');
  });

  it("says when the key is not RSA, or the certificate is not the key's, naming the Secret and never the key", async () => {
    const p = await bed.provider('sf-checks', catalogSpec('sap-success-factors'));
    await createIntegration(kc, bed.ns.name, 'sf-ec', { provider: p }, { privateKey: ec.key, certificate: ec.cert });
    const notRsa = await integrationReady('sf-ec', 'InvalidPrivateKey');
    expect(notRsa.status).toBe('False');
    expect(notRsa.message).toContain('Secret "sf-ec-client": key "privateKey" is an EC key');
    expect(notRsa.message).toContain('RSA');

    await createIntegration(kc, bed.ns.name, 'sf-mismatch', { provider: p }, { privateKey: signer.key, certificate: other.cert });
    const mismatch = await integrationReady('sf-mismatch', 'InvalidSigningCertificate');
    expect(mismatch.message).toContain('Secret "sf-mismatch-client": the certificate in "certificate" is not the certificate of the key');

    await createIntegration(
      kc,
      bed.ns.name,
      'sf-garbage',
      { provider: p },
      { privateKey: signer.key, certificate: 'not-a-certificate-text' },
    );
    const garbage = await integrationReady('sf-garbage', 'InvalidSigningCertificate');
    expect(garbage.message).toContain('key "certificate" is not a PEM X.509 certificate');
    for (const m of [notRsa.message, mismatch.message, garbage.message]) {
      for (const line of [...keyLines(ec.key), ...keyLines(signer.key)]) expect(m).not.toContain(line);
      expect(m).not.toContain('not-a-certificate-text');
    }
  });
});
