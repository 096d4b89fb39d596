/**
 * The key an Integration signs SAML bearer assertions with (RFC 7522) and its X.509 certificate, as the
 * Integration's client Secret holds them (`privateKey`, `certificate`, PEM): the certificate is what the end
 * user's administrator registers with the provider (SuccessFactors' Manage OAuth2 Client Applications), so it
 * must be the key's, current, and the key must be RSA (assertions are signed RSA-SHA256). A refusal names the
 * Secret key and the problem, never any key text.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { outsideValidity } from './client-certificate.js';

/** The Integration Secret's keys. */
export const SIGNING_KEYS = { key: 'privateKey', cert: 'certificate' } as const;

export type SigningCertificateCheck =
  { ok: true; notAfter: number } | { ok: false; reason: 'InvalidPrivateKey' | 'InvalidSigningCertificate'; message: string };

/** `key` and `cert` are the Secret's values (both present: missing keys are reported before this). */
export function checkSigningCertificate(key: string, cert: string, nowMs: number): SigningCertificateCheck {
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    return { ok: false, reason: 'InvalidPrivateKey', message: `key "${SIGNING_KEYS.key}" is not a PEM private key` };
  }
  if (privateKey.asymmetricKeyType !== 'rsa')
    return {
      ok: false,
      reason: 'InvalidPrivateKey',
      message: `key "${SIGNING_KEYS.key}" is an ${String(privateKey.asymmetricKeyType).toUpperCase()} key: SAML assertions are signed with RSA-SHA256, so it must be an RSA key`,
    };
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    return { ok: false, reason: 'InvalidSigningCertificate', message: `key "${SIGNING_KEYS.cert}" is not a PEM X.509 certificate` };
  }
  if (!x509.checkPrivateKey(privateKey))
    return {
      ok: false,
      reason: 'InvalidSigningCertificate',
      message: `the certificate in "${SIGNING_KEYS.cert}" is not the certificate of the key in "${SIGNING_KEYS.key}" (its public key differs)`,
    };
  const notAfter = Date.parse(x509.validTo);
  const problem = outsideValidity(`the certificate in "${SIGNING_KEYS.cert}"`, Date.parse(x509.validFrom), notAfter, nowMs);
  if (problem) return { ok: false, reason: 'InvalidSigningCertificate', message: problem };
  return { ok: true, notAfter };
}

/**
 * The certificate alone, re-encoded from its parse (PEM), for the end user to hand to their administrator: only
 * the first certificate of the value, so nothing else the Secret key holds (a key pasted beside it) can be shown.
 * Undefined when the value is not a certificate.
 */
export function publicCertificatePem(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    return new X509Certificate(value).toString();
  } catch {
    return undefined;
  }
}
