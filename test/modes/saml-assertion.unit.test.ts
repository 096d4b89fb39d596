/**
 * The SAML 2.0 bearer assertion Latchkey writes and signs (src/modes/oauth2-cc/saml-assertion.ts), checked by
 * xml-crypto, a real XML-DSig verifier (exclusive c14n, RSA-SHA256), and by an XML parser: the bytes Latchkey
 * digests are the canonical form of what it sends, whatever the values hold, and a change breaks the signature.
 */
import { DOMParser } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import { generateKeyPairSync } from 'node:crypto';
import { signedSamlAssertion, type SamlAssertionInput } from '../../src/modes/oauth2-cc/saml-assertion.js';
import { makeRsaSigningCertificate } from '../support/test-ca.js';

const { cert, key } = makeRsaSigningCertificate('saml-unit');
const SAML = 'urn:oasis:names:tc:SAML:2.0:assertion';
const NOW = Date.parse('2026-12-06T10:00:00.400Z');

const input = (over: Partial<SamlAssertionInput> = {}): SamlAssertionInput => ({
  issuer: 'www.successfactors.com',
  audience: 'www.successfactors.com',
  recipient: 'https://apisalesdemo4.successfactors.com/oauth/token',
  nameId: 'sfadmin',
  nameIdFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
  attributes: { api_key: 'NDA0ZTVjZjk2ZWM1' },
  lifetimeSeconds: 300,
  nowMs: NOW,
  privateKey: key,
  ...over,
});

function verifies(xml: string, certificate = cert): boolean {
  const doc = new DOMParser().parseFromString(xml, 'text/xml');
  const signature = doc.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature')[0];
  const verifier = new SignedXml({ publicCert: certificate, getCertFromKeyInfo: () => null });
  verifier.loadSignature(signature as unknown as Node);
  try {
    return verifier.checkSignature(xml);
  } catch {
    return false;
  }
}

describe('the SAML bearer assertion (RFC 7522) Latchkey signs', () => {
  it('verifies with the certificate of the key that signed it, and with no other', () => {
    const xml = signedSamlAssertion(input());
    expect(verifies(xml)).toBe(true);
    expect(verifies(xml, makeRsaSigningCertificate('other').cert)).toBe(false);
  });

  it('carries what the provider checks: issuer, subject, bearer confirmation, audience, validity, attributes', () => {
    const doc = new DOMParser().parseFromString(signedSamlAssertion(input()), 'text/xml');
    const one = (name: string) => doc.getElementsByTagNameNS(SAML, name)[0]!;
    expect(doc.documentElement!.getAttribute('Version')).toBe('2.0');
    expect(doc.documentElement!.getAttribute('IssueInstant')).toBe('2026-12-06T10:00:00Z');
    expect(one('Issuer').textContent).toBe('www.successfactors.com');
    expect(one('NameID').textContent).toBe('sfadmin');
    expect(one('SubjectConfirmation').getAttribute('Method')).toBe('urn:oasis:names:tc:SAML:2.0:cm:bearer');
    expect(one('SubjectConfirmationData').getAttribute('Recipient')).toBe('https://apisalesdemo4.successfactors.com/oauth/token');
    expect(one('Conditions').getAttribute('NotBefore')).toBe('2026-12-06T10:00:00Z');
    expect(one('Conditions').getAttribute('NotOnOrAfter')).toBe('2026-12-06T10:05:00Z');
    expect(one('Audience').textContent).toBe('www.successfactors.com');
    expect(one('Attribute').getAttribute('Name')).toBe('api_key');
    expect(one('AttributeValue').textContent).toBe('NDA0ZTVjZjk2ZWM1');
    // SAML's schema: the Signature right after the Issuer.
    expect(one('Issuer').nextSibling!.localName).toBe('Signature');
  });

  it('escapes every value, so markup in a value stays text and the signature still verifies', () => {
    const tricky = `a&b<c>d"e'f\tg\nh\ri ]]> <!-- x -->`;
    const xml = signedSamlAssertion(
      input({ nameId: tricky, attributes: { api_key: tricky, 'x"y': tricky }, recipient: `https://h/t?a=1&b="2"` }),
    );
    expect(verifies(xml)).toBe(true);
    const doc = new DOMParser().parseFromString(xml, 'text/xml');
    expect(doc.getElementsByTagNameNS(SAML, 'NameID')[0]!.textContent).toBe(tricky);
    expect(doc.getElementsByTagNameNS(SAML, 'SubjectConfirmationData')[0]!.getAttribute('Recipient')).toBe(`https://h/t?a=1&b="2"`);
    expect(doc.getElementsByTagNameNS(SAML, 'AttributeValue')[1]!.textContent).toBe(tricky);
    expect(doc.getElementsByTagNameNS(SAML, 'Attribute').length).toBe(2);
  });

  it('is broken by any change to what it asserts', () => {
    const xml = signedSamlAssertion(input());
    expect(verifies(xml.replace('>sfadmin<', '>admin<'))).toBe(false);
    expect(verifies(xml.replace('2026-12-06T10:05:00Z', '2027-12-06T10:05:00Z'))).toBe(false);
  });

  it('is new each time (its ID), and refuses what it cannot sign: a non-RSA key, a control character', () => {
    expect(signedSamlAssertion(input())).not.toBe(signedSamlAssertion(input()));
    const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(() => signedSamlAssertion(input({ privateKey: ec }))).toThrow(/must be an RSA key/);
    expect(() => signedSamlAssertion(input({ privateKey: 'not a key' }))).toThrow(/is not a PEM private key/);
    expect(() => signedSamlAssertion(input({ nameId: 'a\u0001b' }))).toThrow(/control character/);
  });
});
