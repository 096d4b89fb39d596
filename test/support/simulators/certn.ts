/**
 * Certn's token endpoint, as its docs describe it (a client credentials exchange, not a static key):
 * - https://docs.certn.co/api/guides/use-the-api/authorization-header (POST https://api.certn.co/token/ with the
 *   form `grant_type=client_credentials` and the Client ID and Client Secret as HTTP Basic; the token is sent as
 *   `Authorization: Bearer`; `expires_in`, 36000 seconds by default)
 * - https://docs.certn.co/api/start/demo-account/get-your-access-token (the same request on https://demo-api.certn.co,
 *   `Content-Type: application/x-www-form-urlencoded`; the answer `{"access_token", "expires_in": 36000, ...}`)
 * Silent: the answer's other fields (the docs print "...") and the error answer (the simulator's own: RFC 6749's
 * `invalid_client` with 401, `invalid_request` and `unsupported_grant_type` with 400).
 * No API route: the pages read show no answer of an API call.
 */
import { authServer, basicClientCredentials, opaque, type ServedSimulator } from './framework.js';

/** Without an end-to-end case: test/providers/token-request-shapes.test.ts drives it itself. */
export function certn(): ServedSimulator {
  const { state, grants } = authServer();
  const client = { clientId: opaque('', 20), clientSecret: opaque('', 32) };
  return {
    manifest: 'certn-cc',
    hosts: ['api.certn.co', 'demo-api.certn.co'],
    docs: [
      'https://docs.certn.co/api/guides/use-the-api/authorization-header',
      'https://docs.certn.co/api/start/demo-account/get-your-access-token',
    ],
    client,
    state,
    routes: ['api.certn.co', 'demo-api.certn.co'].map((host) => ({
      method: 'POST',
      host,
      path: '/token/',
      handler: basicClientCredentials(grants, client, (accessToken) => ({ access_token: accessToken, expires_in: 36000 })),
    })),
  };
}
