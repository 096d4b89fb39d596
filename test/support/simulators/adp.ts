/**
 * ADP's token endpoint and one API call for Data Connector apps (client credentials, mutual TLS), as its docs
 * describe them:
 * - https://developers.adp.com/articles/guides/auth-process-data-connector-apps (the client credentials grant;
 *   a signed certificate and the client credentials are its prerequisites)
 * - https://developers.adp.com/articles/guides/Making-Your-First-API-Call-With-POSTMAN (the client ID and secret
 *   in the Authorization header, HTTP Basic; the ADP-issued SSL certificate on the request; a token valid for
 *   1 hour; an HTTP 401 from the token service without valid credentials, from other APIs without a valid bearer)
 * - https://developers.adp.com/articles/general/troubleshoot-app-integrations-with-adp (the token request with the
 *   certificate and key, `grant_type=client_credentials`; "Proper client SSL certificate was not presented")
 * - https://developers.adp.com/articles/general/api-common-exceptions-and-tips-for-handling (401 `invalid_client`
 *   "The given client credentials were not valid"; 401 when the proper client SSL certificate was not presented;
 *   400 `unsupported_grant_type` "Invalid grant_type")
 * - https://developers.adp.com/articles/general/access-tokens (every Web API request presents the X.509 certificate
 *   and a bearer token; `GET /hr/v1/workers` on api.adp.com; 401 `invalid_token`)
 * Where the docs are silent, the simulator's own choices: the certificate error's JSON body is
 * `{"error":"invalid_request","error_description":"proper client ssl certificate was not presented"}` (the exceptions
 * page's table cuts its body; this is the body ADP's API clients' tests record); the token answer's fields beyond
 * `access_token` and its hour (`token_type`, `expires_in: 3600`); the workers answer (an empty `workers` list:
 * the docs show no body). "Issued by ADP" is played by a set of registered certificate fingerprints.
 */
import { authServer, bearerOf, clientOf, json, opaque, type ServedSimulator, type SimRequest, type SimAnswer } from './framework.js';

const TOKEN_HOST = 'accounts.adp.com';
const API_HOST = 'api.adp.com';

/** The 401 of a request without an ADP-issued certificate. */
const NO_CERTIFICATE = json(401, { error: 'invalid_request', error_description: 'proper client ssl certificate was not presented' });

export interface AdpSimulator extends ServedSimulator {
  /** Registers a certificate (PEM's SHA-256 fingerprint as Node prints it) as ADP-issued. */
  registerCertificate(fingerprint256: string): void;
  /** The fingerprint of the certificate each request presented (undefined: none), in order. */
  presented: Array<{ path: string; fingerprint?: string }>;
}

/** Without an end-to-end case: test/providers/adp-mtls.test.ts drives it itself. */
export function adp(): AdpSimulator {
  const { state, grants } = authServer();
  const client = { clientId: opaque('adp-', 12), clientSecret: opaque('', 20) };
  const issued = new Set<string>();
  const presented: AdpSimulator['presented'] = [];
  const certified = (req: SimRequest): boolean => {
    presented.push({ path: req.path, ...(req.clientCert ? { fingerprint: req.clientCert.fingerprint256 } : {}) });
    return req.clientCert !== undefined && issued.has(req.clientCert.fingerprint256);
  };
  const token = (req: SimRequest): SimAnswer => {
    if (!certified(req)) return NO_CERTIFICATE;
    if (req.form.get('grant_type') !== 'client_credentials')
      return json(400, { error: 'unsupported_grant_type', error_description: 'Invalid grant_type' });
    const { clientId, clientSecret, via } = clientOf(req);
    if (via !== 'basic' || clientId !== client.clientId || clientSecret !== client.clientSecret)
      return json(401, { error: 'invalid_client', error_description: 'The given client credentials were not valid' });
    const { accessToken } = grants.issueTokens({ clientId, redirectUri: '', scope: '', extra: {} });
    return json(200, { access_token: accessToken, token_type: 'Bearer', expires_in: 3600 });
  };
  return {
    manifest: 'adp',
    hosts: [TOKEN_HOST, API_HOST],
    docs: [
      'https://developers.adp.com/articles/guides/auth-process-data-connector-apps',
      'https://developers.adp.com/articles/guides/Making-Your-First-API-Call-With-POSTMAN',
      'https://developers.adp.com/articles/general/troubleshoot-app-integrations-with-adp',
      'https://developers.adp.com/articles/general/api-common-exceptions-and-tips-for-handling',
      'https://developers.adp.com/articles/general/access-tokens',
    ],
    client,
    state,
    clientCertificates: true,
    registerCertificate: (fingerprint) => issued.add(fingerprint),
    presented,
    routes: [
      { method: 'POST', host: TOKEN_HOST, path: '/auth/oauth/v2/token', handler: token },
      {
        method: 'GET',
        host: API_HOST,
        path: '/hr/v1/workers',
        handler: (req) => {
          if (!certified(req)) return NO_CERTIFICATE;
          const bearer = bearerOf(req);
          if (!bearer || !state.accessTokens.includes(bearer)) return json(401, { error: 'invalid_token' });
          return json(200, { workers: [] });
        },
      },
    ],
  };
}
