/**
 * A SAML 2.0 bearer assertion (RFC 7522 §3), signed with the Integration's RSA key (RSA-SHA256, an enveloped
 * XML signature over exclusive canonicalization). Latchkey writes the XML itself, already in its exclusive
 * canonical form (no declaration, attributes in order, no self-closing tags, no whitespace between elements,
 * each namespace declared where first used), so the bytes digested are the bytes sent and no XML library is
 * needed; every value is escaped as canonical XML escapes it. Verified against xml-crypto in the tests.
 */
import { createHash, createPrivateKey, randomBytes, sign, type KeyObject } from 'node:crypto';
import { LatchkeyError } from '../../domain/errors.js';

const SAML = 'urn:oasis:names:tc:SAML:2.0:assertion';
const DS = 'http://www.w3.org/2000/09/xmldsig#';
const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#';

export interface SamlAssertionInput {
  issuer: string;
  nameId: string;
  nameIdFormat: string;
  audience: string;
  /** The token endpoint the assertion is for (SubjectConfirmationData's Recipient). */
  recipient: string;
  attributes: Record<string, string>;
  lifetimeSeconds: number;
  nowMs: number;
  /** PEM, RSA. */
  privateKey: string;
}

/** The signed assertion's XML. */
export function signedSamlAssertion(input: SamlAssertionInput): string {
  const key = rsaKey(input.privateKey);
  const id = `_${randomBytes(20).toString('hex')}`;
  const now = instant(input.nowMs);
  const notOnOrAfter = instant(input.nowMs + input.lifetimeSeconds * 1000);
  const body =
    el('saml2:Issuer', {}, text(input.issuer)) +
    el(
      'saml2:Subject',
      {},
      el('saml2:NameID', { Format: input.nameIdFormat }, text(input.nameId)) +
        el(
          'saml2:SubjectConfirmation',
          { Method: 'urn:oasis:names:tc:SAML:2.0:cm:bearer' },
          el('saml2:SubjectConfirmationData', { NotOnOrAfter: notOnOrAfter, Recipient: input.recipient }, ''),
        ),
    ) +
    el(
      'saml2:Conditions',
      { NotBefore: now, NotOnOrAfter: notOnOrAfter },
      el('saml2:AudienceRestriction', {}, el('saml2:Audience', {}, text(input.audience))),
    ) +
    el(
      'saml2:AuthnStatement',
      { AuthnInstant: now, SessionIndex: id },
      el(
        'saml2:AuthnContext',
        {},
        el('saml2:AuthnContextClassRef', {}, text('urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport')),
      ),
    ) +
    el(
      'saml2:AttributeStatement',
      {},
      Object.entries(input.attributes)
        .map(([name, value]) => el('saml2:Attribute', { Name: name }, el('saml2:AttributeValue', {}, text(value))))
        .join(''),
    );
  const open = `<saml2:Assertion xmlns:saml2="${SAML}"${attrs({ ID: id, IssueInstant: now, Version: '2.0' })}>`;
  const close = '</saml2:Assertion>';
  // The enveloped-signature transform removes the Signature: the digest is over the assertion without it.
  const digest = createHash('sha256')
    .update(open + body + close)
    .digest('base64');
  const signedInfo = (nsDecl: string) =>
    `<ds:SignedInfo${nsDecl}>` +
    el('ds:CanonicalizationMethod', { Algorithm: EXC_C14N }, '') +
    el('ds:SignatureMethod', { Algorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256' }, '') +
    el(
      'ds:Reference',
      { URI: `#${id}` },
      el(
        'ds:Transforms',
        {},
        el('ds:Transform', { Algorithm: 'http://www.w3.org/2000/09/xmldsig#enveloped-signature' }, '') +
          el('ds:Transform', { Algorithm: EXC_C14N }, ''),
      ) +
        el('ds:DigestMethod', { Algorithm: 'http://www.w3.org/2001/04/xmlenc#sha256' }, '') +
        el('ds:DigestValue', {}, digest),
    ) +
    '</ds:SignedInfo>';
  // Canonicalized alone, SignedInfo declares the ds namespace its ancestor Signature declares in the document.
  const signatureValue = sign('sha256', Buffer.from(signedInfo(` xmlns:ds="${DS}"`)), key).toString('base64');
  const signature = `<ds:Signature xmlns:ds="${DS}">` + signedInfo('') + el('ds:SignatureValue', {}, signatureValue) + '</ds:Signature>';
  // SAML's schema puts the Signature right after the Issuer.
  const issuerEnd = body.indexOf('</saml2:Issuer>') + '</saml2:Issuer>'.length;
  return open + body.slice(0, issuerEnd) + signature + body.slice(issuerEnd) + close;
}

function rsaKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new LatchkeyError('internal', 'integration_not_configured', "The Integration's privateKey is not a PEM private key.");
  }
  if (key.asymmetricKeyType !== 'rsa')
    throw new LatchkeyError('internal', 'integration_not_configured', "The Integration's privateKey must be an RSA key (RSA-SHA256).");
  return key;
}

/** xs:dateTime in UTC, to the second (SAML 2.0 §1.3.3: no time zone but Z). */
function instant(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function el(name: string, attributes: Record<string, string>, content: string): string {
  return `<${name}${attrs(attributes)}>${content}</${name}>`;
}

/** Attributes without a namespace, in canonical order (by name). */
function attrs(attributes: Record<string, string>): string {
  return Object.keys(attributes)
    .sort()
    .map((name) => ` ${name}="${attributeValue(attributes[name]!)}"`)
    .join('');
}

/** Characters XML 1.0 cannot carry at all: refused rather than sent. */
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

function checked(value: string): string {
  if (NOT_XML.test(value))
    throw new LatchkeyError('invalid_input', 'invalid_connection_config', 'A value of the SAML assertion has a control character.');
  return value;
}

/** Text as exclusive canonicalization writes it (C14N §1.1: &amp; &lt; &gt; &#xD;). */
function text(value: string): string {
  return checked(value).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#xD;');
}

/** An attribute value as exclusive canonicalization writes it (&amp; &lt; &quot; &#x9; &#xA; &#xD;). */
function attributeValue(value: string): string {
  return checked(value)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/"/g, '&quot;')
    .replace(/\t/g, '&#x9;')
    .replace(/\n/g, '&#xA;')
    .replace(/\r/g, '&#xD;');
}
