/**
 * The SAML bearer signer's key and certificate (RFC 7522: the Integration's `privateKey` and `certificate`): what the
 * Integration reconciler checks (an RSA key, the certificate its own, current), what the Connect form shows (the
 * certificate alone, with the Provider's help), and that no refusal or view carries the key's text.
 */
import { generateKeyPairSync } from 'node:crypto';
import { certificateToRegister } from '../../src/connect/certificate-view.js';
import { checkSigningCertificate, publicCertificatePem } from '../../src/domain/signing-certificate.js';
import type { IntegrationResource, ProviderResource } from '../../src/k8s/resources.js';
import { catalogSpec } from '../support/catalog-files.js';
import { makeClientCertificate, makeRsaSigningCertificate } from '../support/test-ca.js';

const signer = makeRsaSigningCertificate('unit-signer');
const other = makeRsaSigningCertificate('unit-other');
const ec = makeClientCertificate('unit-ec');
const now = Date.now();
const DAY = 86_400_000;
const keyBody = (pem: string) => pem.split('\n').filter((l) => l && !l.startsWith('-----'));

describe('checkSigningCertificate', () => {
  it('accepts an RSA key with its own current certificate, and gives when it expires', () => {
    const check = checkSigningCertificate(signer.key, signer.cert, now);
    expect(check).toMatchObject({ ok: true });
    if (!check.ok) throw new Error('unreachable');
    expect(check.notAfter).toBeGreaterThan(now + DAY);
  });

  const ecPkcs8 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const ed = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  it.each([
    [
      'an EC key (SEC1, as openssl writes it)',
      ec.key,
      ec.cert,
      'InvalidPrivateKey',
      'key "privateKey" is an EC key: SAML assertions are signed with RSA-SHA256',
    ],
    ['an EC key (PKCS #8)', ecPkcs8, signer.cert, 'InvalidPrivateKey', 'is an EC key'],
    ['an Ed25519 key', ed, signer.cert, 'InvalidPrivateKey', 'is an ED25519 key'],
    ['a key that is not PEM', 'not-a-key-text', signer.cert, 'InvalidPrivateKey', 'key "privateKey" is not a PEM private key'],
    [
      'a certificate that is not PEM',
      signer.key,
      'not-a-certificate',
      'InvalidSigningCertificate',
      'key "certificate" is not a PEM X.509 certificate',
    ],
    ["another key's certificate", signer.key, other.cert, 'InvalidSigningCertificate', 'is not the certificate of the key in "privateKey"'],
  ])('refuses %s, naming the Secret key without its text', (_what, key, cert, reason, message) => {
    const check = checkSigningCertificate(key, cert, now);
    expect(check).toMatchObject({ ok: false, reason });
    if (check.ok) throw new Error('unreachable');
    expect(check.message).toContain(message);
    for (const line of [...keyBody(key), ...keyBody(cert)]) expect(check.message).not.toContain(line);
  });

  it('refuses an expired certificate, and one not valid yet, with the instant', () => {
    const ok = checkSigningCertificate(signer.key, signer.cert, now);
    if (!ok.ok) throw new Error('unreachable');
    const expired = checkSigningCertificate(signer.key, signer.cert, ok.notAfter + 1000);
    expect(expired).toEqual({
      ok: false,
      reason: 'InvalidSigningCertificate',
      message: `the certificate in "certificate" expired at ${new Date(ok.notAfter).toISOString()}`,
    });
    const early = checkSigningCertificate(signer.key, signer.cert, now - 3 * DAY);
    expect(early).toMatchObject({
      ok: false,
      reason: 'InvalidSigningCertificate',
      message: expect.stringContaining('is not valid before'),
    });
  });
});

describe('publicCertificatePem', () => {
  it('gives the certificate alone, even when a key was pasted beside it; nothing for what is not a certificate', () => {
    expect(publicCertificatePem(signer.cert)?.trim()).toBe(signer.cert.trim());
    const both = publicCertificatePem(`${signer.key}\n${signer.cert}`)!;
    expect(both.trim()).toBe(signer.cert.trim());
    for (const line of keyBody(signer.key)) expect(both).not.toContain(line);
    expect(publicCertificatePem('not-a-certificate')).toBeUndefined();
    expect(publicCertificatePem(signer.key)).toBeUndefined();
    expect(publicCertificatePem(undefined)).toBeUndefined();
  });
});

describe('certificateToRegister (the Connect form)', () => {
  const provider = (spec: object) =>
    ({ apiVersion: 'latchkey.dev/v1alpha1', kind: 'Provider', metadata: { name: 'p' }, spec }) as unknown as ProviderResource;
  const integration = { metadata: { name: 'sf', namespace: 'ns' }, spec: { provider: 'p', clientSecretRef: { name: 'sf-client' } } };
  const catalog = (data: Record<string, string>) => ({
    getIntegration: (ns: string, name: string) =>
      ns === 'ns' && name === 'sf' ? (integration as unknown as IntegrationResource) : undefined,
    readSecretValue: (ns: string, name: string, key: string) => (ns === 'ns' && name === 'sf-client' ? data[key] : undefined),
  });
  const sf = provider(catalogSpec('sap-success-factors'));

  it("shows a SAML bearer Integration's certificate with the Provider's help on where it is registered", () => {
    const view = certificateToRegister(catalog({ privateKey: signer.key, certificate: signer.cert }), 'ns', 'sf', sf, 'en');
    expect(view?.pem.trim()).toBe(signer.cert.trim());
    expect(view).toMatchObject({
      fileName: 'sf.crt',
      description: expect.stringContaining('Manage OAuth2 Client Applications'),
      docsUrl: 'https://apps.support.sap.com/sap/support/knowledge/en/2850646',
    });
    expect(JSON.stringify(view)).not.toContain(keyBody(signer.key)[1]);
  });

  it('shows nothing without a certificate, or for a Provider that takes no SAML assertion', () => {
    expect(certificateToRegister(catalog({ privateKey: signer.key }), 'ns', 'sf', sf, 'en')).toBeUndefined();
    expect(certificateToRegister(catalog({ certificate: 'garbage' }), 'ns', 'sf', sf, 'en')).toBeUndefined();
    const plain = provider({ displayName: 'P', authMode: 'OAUTH2_CC', tokenUrl: 'https://a.example/token' });
    expect(certificateToRegister(catalog({ certificate: signer.cert }), 'ns', 'sf', plain, 'en')).toBeUndefined();
  });
});
