/**
 * SAP SuccessFactors' token endpoint and OData API, as SAP's pages found describe them (the manifest lists them):
 * - KBA 3462403: the client application registered in Manage OAuth2 Client Applications (its X.509 certificate)
 *   gives the API key; the SAML assertion and the API key (as client_id) are passed to generate an OAuth token;
 * - KBA 2668018: POST https://<api server>/oauth/token; an invalid user is refused with 401
 *   `{"errorHttpCode": "401", "errorMessage": "Unable to authenticate the client (Login failed - invalid user)"}`;
 * - KBA 3336571: an assertion whose signature does not verify with the client's certificate is refused with 401
 *   "Unable to verify the signature of the SAML assertion. Please ensure that the assertion has a signature and the
 *   key pairs match the client ID";
 * - KBA 2872019: `new_token=true` gives a new access token, valid for 24 hours; an expired token is refused with
 *   "[LGN0022]The access token is either rejected or expired".
 * The real part: the assertion's signature is verified by xml-crypto (a real XML-DSig verifier, exclusive c14n)
 * against the registered certificate alone. Hand-written (no SuccessFactors can run here), so silent where SAP's
 * stored pages are: the success answer's keys (access_token, token_type, expires_in, as SAP's generators and
 * guides read them), the error bodies' other fields and statuses of checks the KBAs do not name (audience,
 * recipient, validity, company: the simulator answers them as the signature failure's 401 shape), and the OData
 * answer (`{"d": {"results": [...]}}`, OData V2's JSON format).
 */
import { DOMParser } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import { authServer, bearerOf, json, opaque, type Route, type ServedSimulator, type SimRequest } from './framework.js';

export const SF_HOST = 'apisalesdemo4.successfactors.com';
const SAML = 'urn:oasis:names:tc:SAML:2.0:assertion';

export interface SuccessFactorsSimulator extends ServedSimulator {
  /** The registered client: its API key and the X.509 certificate it was registered with. */
  registered: { apiKey: string; certificate: string; companyId: string; userId: string };
  /** Seconds an access token lives (24 hours as SAP's KBA says; a test shortens it). */
  lifetime: { seconds: number };
  /** Every assertion that verified, as received (the test checks they differ). */
  assertions: string[];
  /** Expire every token issued so far. */
  expireTokens(): void;
}

const refuse = (message: string) => json(401, { errorHttpCode: '401', errorMessage: message });
const SIGNATURE_FAILURE =
  'Unable to verify the signature of the SAML assertion. Please ensure that the assertion has a signature and the key pairs match the client ID';

export function sapSuccessFactors(registered: { certificate: string }): SuccessFactorsSimulator {
  const { state, grants } = authServer();
  const client = { clientId: opaque('', 20), clientSecret: '' };
  const reg = { apiKey: client.clientId, certificate: registered.certificate, companyId: 'SFPART012345', userId: 'sfadmin' };
  const lifetime = { seconds: 86400 };
  const assertions: string[] = [];
  const expired = new Set<string>();

  function checkAssertion(req: SimRequest): string | undefined {
    const xml = Buffer.from(req.form.get('assertion') ?? '', 'base64').toString('utf8');
    const doc = new DOMParser().parseFromString(xml, 'text/xml');
    const assertion = doc.documentElement;
    if (!assertion || assertion.localName !== 'Assertion' || assertion.namespaceURI !== SAML) return SIGNATURE_FAILURE;
    const signature = assertion.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature')[0];
    if (!signature) return SIGNATURE_FAILURE;
    const verifier = new SignedXml({ publicCert: reg.certificate, getCertFromKeyInfo: () => null });
    verifier.loadSignature(signature as unknown as Node);
    let valid = false;
    try {
      valid = verifier.checkSignature(xml) && verifier.getSignedReferences().length === 1;
    } catch {
      valid = false;
    }
    if (!valid) return SIGNATURE_FAILURE;
    const one = (name: string) => assertion.getElementsByTagNameNS(SAML, name)[0];
    const now = Date.now();
    const conditions = one('Conditions');
    const confirmation = one('SubjectConfirmationData');
    const audience = one('Audience')?.textContent;
    const apiKey = [...Array.from(assertion.getElementsByTagNameNS(SAML, 'Attribute'))]
      .find((a) => a.getAttribute('Name') === 'api_key')
      ?.getElementsByTagNameNS(SAML, 'AttributeValue')[0]?.textContent;
    if (
      one('Issuer')?.textContent !== 'www.successfactors.com' ||
      audience !== 'www.successfactors.com' ||
      confirmation?.getAttribute('Recipient') !== `https://${req.host}/oauth/token` ||
      !(Date.parse(conditions?.getAttribute('NotBefore') ?? '') <= now + 5000) ||
      !(Date.parse(conditions?.getAttribute('NotOnOrAfter') ?? '') > now) ||
      !(Date.parse(confirmation?.getAttribute('NotOnOrAfter') ?? '') > now) ||
      apiKey !== reg.apiKey
    )
      return SIGNATURE_FAILURE;
    if (one('NameID')?.textContent !== reg.userId) return 'Unable to authenticate the client (Login failed - invalid user)';
    assertions.push(xml);
    return undefined;
  }

  const token: Route = {
    method: 'POST',
    host: SF_HOST,
    path: '/oauth/token',
    handler: (req) => {
      if (!String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return refuse('Invalid request');
      if (req.form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:saml2-bearer') return refuse('Invalid grant type');
      if (req.form.get('client_id') !== reg.apiKey || req.form.get('company_id') !== reg.companyId || req.headers.authorization)
        return refuse('Unable to authenticate the client');
      const problem = checkAssertion(req);
      if (problem) return refuse(problem);
      const { accessToken } = grants.issueTokens({ clientId: reg.apiKey, redirectUri: '', scope: '', extra: {} });
      return json(200, { access_token: accessToken, token_type: 'Bearer', expires_in: lifetime.seconds });
    },
  };
  const users: Route = {
    method: 'GET',
    host: SF_HOST,
    path: '/odata/v2/User',
    handler: (req) => {
      const bearer = bearerOf(req);
      if (!grants.validAccess(bearer) || expired.has(bearer!)) return refuse('[LGN0022]The access token is either rejected or expired');
      return json(200, { d: { results: [{ userId: reg.userId, username: 'sfadmin' }] } });
    },
  };
  return {
    manifest: 'sap-success-factors',
    hosts: [SF_HOST],
    docs: [
      'https://userapps.support.sap.com/sap/support/knowledge/en/3462403',
      'https://userapps.support.sap.com/sap/support/knowledge/en/2668018',
      'https://userapps.support.sap.com/sap/support/knowledge/en/3336571',
      'https://userapps.support.sap.com/sap/support/knowledge/en/2872019',
    ],
    client,
    state,
    routes: [token, users],
    registered: reg,
    lifetime,
    assertions,
    expireTokens: () => state.accessTokens.forEach((t) => expired.add(t)),
  };
}
