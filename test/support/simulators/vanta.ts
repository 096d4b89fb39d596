/**
 * Vanta's token endpoint, as its docs describe it (a client credentials provider whose token request is JSON):
 * - https://developer.vanta.com/docs/rest-api-authentication (POST https://api.vanta.com/oauth/token,
 *   `Content-Type: application/json`, a JSON object with `client_id`, `client_secret`, `scope` and
 *   `grant_type: "client_credentials"`)
 * - https://developer.vanta.com/docs/authorize-using-oauth (the answer: `access_token`, `expires_in: 3600`,
 *   `token_type: "Bearer"`)
 * The docs show no form-encoded request and no error answer: a request that is not that JSON object is
 * refused here with RFC 6749's `invalid_request` (the simulator's own words), a wrong client with `invalid_client`.
 * No API route: the docs' first call (GET /v1/integrations) shows no answer.
 */
import { authServer, json, opaque, type ServedSimulator } from './framework.js';

/** Without an end-to-end case: test/providers/token-request-shapes.test.ts drives it itself. */
export function vanta(): ServedSimulator & { scopes: string[] } {
  const { state, grants } = authServer();
  const client = { clientId: opaque('vci_', 12), clientSecret: opaque('vcs_', 20) };
  const scopes: string[] = [];
  return {
    manifest: 'vanta',
    hosts: ['api.vanta.com'],
    docs: ['https://developer.vanta.com/docs/rest-api-authentication', 'https://developer.vanta.com/docs/authorize-using-oauth'],
    client,
    state,
    scopes,
    routes: [
      {
        method: 'POST',
        host: 'api.vanta.com',
        path: '/oauth/token',
        handler: (req) => {
          if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) return json(400, { error: 'invalid_request' });
          let body: Record<string, unknown>;
          try {
            body = JSON.parse(req.body) as Record<string, unknown>;
          } catch {
            return json(400, { error: 'invalid_request' });
          }
          if (body.grant_type !== 'client_credentials') return json(400, { error: 'unsupported_grant_type' });
          if (body.client_id !== client.clientId || body.client_secret !== client.clientSecret)
            return json(401, { error: 'invalid_client' });
          scopes.push(String(body.scope ?? ''));
          const { accessToken } = grants.issueTokens({
            clientId: client.clientId,
            redirectUri: '',
            scope: String(body.scope ?? ''),
            extra: {},
          });
          return json(200, { access_token: accessToken, expires_in: 3600, token_type: 'Bearer' });
        },
      },
    ],
  };
}
