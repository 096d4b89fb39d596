/**
 * The TLS client certificate an Integration's kubernetes.io/tls Secret holds (mutual TLS): what is checked before
 * it is used (both keys, both PEM, the key the certificate's, within its validity), what token requests and the
 * proxy make of it (a clear 409 when it is missing or unusable; a refresh's failure the Integration's
 * misconfiguration), and that no refusal carries the key's text.
 */
import { checkClientCertificate, parseClientCertificate, validAt } from '../../src/domain/client-certificate.js';
import type { LatchkeyError } from '../../src/domain/errors.js';
import { clientAuthentication, requiredCertificate, tokenRequestsPresentCertificate } from '../../src/auth/token-request.js';
import type { ProviderSpec } from '../../src/k8s/resources.js';
import { classifyRefreshFailure } from '../../src/auth/refresh/errors.js';
import { makeClientCertificate } from '../support/test-ca.js';

const issued = makeClientCertificate('unit-issued');
const other = makeClientCertificate('unit-other');
const now = Date.now();
const DAY = 86_400_000;

describe('checkClientCertificate', () => {
  it('accepts a certificate with its key, and gives its validity window', () => {
    const check = checkClientCertificate(issued.cert, issued.key, now);
    expect(check).toMatchObject({ ok: true, certificate: issued });
    if (!check.ok) throw new Error('unreachable');
    expect(check.notBefore).toBeLessThanOrEqual(now);
    expect(check.notAfter).toBeGreaterThan(now + DAY);
  });

  it.each([
    ['no certificate', undefined, issued.key, 'SecretKeyMissing', 'lacks "tls.crt"'],
    ['no key', issued.cert, undefined, 'SecretKeyMissing', 'lacks "tls.key"'],
    ['neither', '', '', 'SecretKeyMissing', 'lacks "tls.crt" and "tls.key"'],
    ['a certificate that is not PEM', 'not-a-certificate', issued.key, 'InvalidClientCertificate', '"tls.crt" is not a PEM certificate'],
    [
      'a key that is not PEM',
      issued.cert,
      'not-a-key-value',
      'InvalidClientCertificate',
      '"tls.key" is not an unencrypted PEM private key',
    ],
    ["another certificate's key", issued.cert, other.key, 'InvalidClientCertificate', 'is not the key of the certificate'],
  ])('refuses %s, saying which key, without its text', (_name, cert, key, reason, message) => {
    const check = checkClientCertificate(cert, key, now);
    expect(check).toMatchObject({ ok: false, reason });
    if (check.ok) throw new Error('unreachable');
    expect(check.message).toContain(message);
    expect(check.message).not.toMatch(/PRIVATE KEY|BEGIN|not-a-key-value/);
  });

  it('refuses it outside its validity window (the parse is kept, the time checked on each use)', () => {
    const parsed = parseClientCertificate(issued.cert, issued.key);
    expect(validAt(parsed, now).ok).toBe(true);
    expect(validAt(parsed, now + 3 * DAY)).toMatchObject({
      ok: false,
      reason: 'InvalidClientCertificate',
      message: expect.stringContaining('expired at'),
    });
    expect(validAt(parsed, now - DAY)).toMatchObject({ ok: false, message: expect.stringContaining('is not valid before') });
  });
});

describe('token requests with a client certificate', () => {
  const spec = (extra: Partial<ProviderSpec>): ProviderSpec => ({
    displayName: 'P',
    authMode: 'OAUTH2_CC',
    tokenUrl: 'https://p.test/token',
    ...extra,
  });

  it('present one for tls_client_auth and for a Provider whose clientCertificate says so, and for no other', () => {
    expect(tokenRequestsPresentCertificate(spec({ tokenRequestAuthMethod: 'tls_client_auth' }))).toBe(true);
    expect(tokenRequestsPresentCertificate(spec({ tokenRequestAuthMethod: 'basic', clientCertificate: {} }))).toBe(true);
    expect(tokenRequestsPresentCertificate(spec({ tokenRequestAuthMethod: 'basic' }))).toBe(false);
  });

  it('tls_client_auth sends the client ID alone (RFC 8705 §2.1): no secret, no assertion', () => {
    const auth = clientAuthentication(spec({ tokenRequestAuthMethod: 'tls_client_auth' }), { clientId: 'c', clientSecret: 's' }, undefined);
    expect(auth.method).toBe('tls_client_auth');
    const body = new URLSearchParams();
    const headers = new Headers();
    void auth.auth({ issuer: 'https://p.test' }, { client_id: 'c' }, body, headers);
    expect(Object.fromEntries(body)).toEqual({ client_id: 'c' });
    expect(headers.get('authorization')).toBeNull();
  });

  it('refuse clearly (409 integration_not_configured) when the Integration names none or one that cannot be used', () => {
    expect(requiredCertificate(false, undefined)).toBeUndefined();
    const refusal = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return err as LatchkeyError;
      }
      throw new Error('not refused');
    };
    const none = refusal(() => requiredCertificate(true, undefined));
    expect(none).toMatchObject({ kind: 'conflict', code: 'integration_not_configured' });
    expect(none.message).toContain('clientCertificateRef');
    const bad = refusal(() => requiredCertificate(true, checkClientCertificate(issued.cert, other.key, now)));
    expect(bad).toMatchObject({ kind: 'conflict', code: 'integration_not_configured' });
    expect(bad.message).toContain('is not the key of the certificate');
    expect(bad.message).not.toContain('PRIVATE KEY');
    expect(requiredCertificate(true, checkClientCertificate(issued.cert, issued.key, now))).toEqual(issued);
  });

  it("a refresh refused so is the Integration's misconfiguration (permanent, naming it), never a provider outage", () => {
    const expired = checkClientCertificate(issued.cert, issued.key, now + 3 * DAY);
    let thrown: unknown;
    try {
      requiredCertificate(true, expired);
    } catch (err) {
      thrown = err;
    }
    const failure = classifyRefreshFailure(thrown, now, [], 'adp-payroll');
    expect(failure).toMatchObject({ permanent: true, code: 'integration_misconfigured', kind: 'unavailable' });
    expect(failure.message).toMatch(/^integration adp-payroll cannot be used: .*the certificate in "tls.crt" expired at/);
    expect(failure.message).not.toContain('PRIVATE KEY');
  });
});
