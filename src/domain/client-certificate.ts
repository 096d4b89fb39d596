/**
 * A TLS client certificate an Integration presents to its provider (RFC 8705 mutual TLS): the PEM
 * certificate (its chain may follow it, as cert-manager writes `tls.crt`) and its private key, as a
 * kubernetes.io/tls Secret holds them. Checked before use: both parse, the key is the certificate's, and
 * the certificate is within its validity. A refusal says what is wrong without any of the key's text.
 */
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';

export interface ClientCertificate {
  /** PEM: the certificate, then any intermediates. */
  cert: string;
  /** PEM: its private key. */
  key: string;
}

/** The Secret keys of the kubernetes.io/tls type (what cert-manager writes). */
export const TLS_SECRET_KEYS = { cert: 'tls.crt', key: 'tls.key' } as const;

export type ClientCertificateCheck =
  | { ok: true; certificate: ClientCertificate; notBefore: number; notAfter: number }
  | { ok: false; reason: 'SecretNotFound' | 'SecretKeyMissing' | 'InvalidClientCertificate'; message: string };

/**
 * `cert` and `key` as a Secret's `tls.crt` and `tls.key` hold them (undefined: absent or empty), checked
 * at `nowMs`. The parse is the costly part: {@link parseClientCertificate} once per Secret, then {@link validAt}.
 */
export function checkClientCertificate(cert: string | undefined, key: string | undefined, nowMs: number): ClientCertificateCheck {
  return validAt(parseClientCertificate(cert, key), nowMs);
}

/** Both parse, and the key is the certificate's (the validity window is left to {@link validAt}). */
export function parseClientCertificate(cert: string | undefined, key: string | undefined): ClientCertificateCheck {
  const missing = [cert ? undefined : TLS_SECRET_KEYS.cert, key ? undefined : TLS_SECRET_KEYS.key].filter(Boolean);
  if (missing.length) {
    return {
      ok: false,
      reason: 'SecretKeyMissing',
      message: `lacks ${missing.map((k) => `"${k}"`).join(' and ')} (a kubernetes.io/tls Secret holds the certificate and its key)`,
    };
  }
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert!);
  } catch {
    return { ok: false, reason: 'InvalidClientCertificate', message: `key "${TLS_SECRET_KEYS.cert}" is not a PEM certificate` };
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(key!);
  } catch {
    return { ok: false, reason: 'InvalidClientCertificate', message: `key "${TLS_SECRET_KEYS.key}" is not an unencrypted PEM private key` };
  }
  if (!x509.checkPrivateKey(privateKey)) {
    return {
      ok: false,
      reason: 'InvalidClientCertificate',
      message: `the private key in "${TLS_SECRET_KEYS.key}" is not the key of the certificate in "${TLS_SECRET_KEYS.cert}"`,
    };
  }
  return { ok: true, certificate: { cert: cert!, key: key! }, notBefore: Date.parse(x509.validFrom), notAfter: Date.parse(x509.validTo) };
}

/** A parsed certificate refused outside its validity window. */
export function validAt(check: ClientCertificateCheck, nowMs: number): ClientCertificateCheck {
  if (!check.ok) return check;
  const problem = outsideValidity(`the certificate in "${TLS_SECRET_KEYS.cert}"`, check.notBefore, check.notAfter, nowMs);
  return problem ? { ok: false, reason: 'InvalidClientCertificate', message: problem } : check;
}

/** Why a certificate (`where` names it) is not current at `nowMs`; undefined when it is. */
export function outsideValidity(where: string, notBefore: number, notAfter: number, nowMs: number): string | undefined {
  if (notAfter <= nowMs) return `${where} expired at ${new Date(notAfter).toISOString()}`;
  if (notBefore > nowMs) return `${where} is not valid before ${new Date(notBefore).toISOString()}`;
  return undefined;
}
