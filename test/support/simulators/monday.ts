/**
 * monday.com (OAuth 2.1, which every new app uses), as its docs describe it:
 * - https://developer.monday.com/apps/docs/oauth-2-1 (the app makes a PKCE verifier and challenge and sends the user to
 *   GET https://auth.monday.com/oauth2/authorize with the challenge; monday.com redirects to the `redirect_uri` with a
 *   temporary code; the code and the verifier are exchanged at https://auth.monday.com/oauth_ms/oauth/token for an
 *   access token that expires and a refresh token)
 * - https://developer.monday.com/apps/docs/migrating-to-the-new-oauth-flow and monday.com's own migration skill
 *   (mondaycom/agentic-monday-plugins, monday-oauth-migrate: the exchange sends `client_id`, `client_secret`, `code`,
 *   optionally `redirect_uri`, and `code_verifier`; the answer `{"access_token", "refresh_token", "token_type":
 *   "Bearer", "scope"}`, no `expires_in` (the access token is a JWT whose `exp` says when); a refresh sends
 *   `client_id`, `client_secret`, `refresh_token`, `grant_type=refresh_token` and is answered the same way: "Each
 *   refresh returns a new refresh_token")
 * - https://auth.monday.com/.well-known/oauth-authorization-server/mcp (the RFC 8414 metadata of monday's MCP issuer,
 *   which shares these endpoints, as a public integration recorded it: token endpoint authentication
 *   `client_secret_post` or `client_secret_basic`, PKCE `S256`)
 * - https://developer.monday.com/apps/docs/oauth (scopes such as `me:read`, `boards:read`)
 * - https://developer.monday.com/api-reference/docs/errors (POST https://api.monday.com/v2 with a GraphQL `query`;
 *   an answer carries `data` and `account_id`, `me` has a string `id`; errors are an `errors` array; other statuses
 *   than 200 are for transport-level errors)
 * The simulator requires PKCE (the flow is built on it) and reads the token request as a form (RFC 6749, what
 * Latchkey sends) or as the skill's JSON object.
 * Silent: the redirect of a refused authorization (the end-to-end test provokes a refused code), the token errors'
 * bodies (RFC 6749 §5.2's `error` is sent), the body of a 401 for a bad token (`{"errors": [{"message": "Not
 * Authenticated"}]}` is sent). The simulator's tokens are opaque strings, not JWTs.
 */
import {
  e2eCase,
  json,
  oauth2Provider,
  oauthErrors,
  opaqueClient,
  postRoute,
  tokenAnswer,
  type ProviderSimulator,
  type SimRequest,
} from './framework.js';

const ME = { id: '4012689', name: 'Ada Lovelace' };
const ACCOUNT_ID = 18888528;

/** The GraphQL query's answer: `me` for a query that asks for it. */
const answerQuery = (req: SimRequest) =>
  /\bme\s*\{/.test(String((JSON.parse(req.body || '{}') as { query?: unknown }).query ?? ''))
    ? json(200, { data: { me: ME }, account_id: ACCOUNT_ID })
    : json(200, { errors: [{ message: 'the simulator answers only { me { id name } }' }], account_id: ACCOUNT_ID });

export function monday(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'monday',
    docs: [
      'https://developer.monday.com/apps/docs/oauth-2-1',
      'https://developer.monday.com/apps/docs/migrating-to-the-new-oauth-flow',
      'https://developer.monday.com/api-reference/docs/errors',
    ],
    client: opaqueClient(16, 16),
    authorize: { url: 'https://auth.monday.com/oauth2/authorize', provider: 'monday.com' },
    token: {
      url: 'https://auth.monday.com/oauth_ms/oauth/token',
      auth: 'either',
      acceptsJson: true,
      pkceRequired: true,
      refresh: { rotate: true },
    },
    answer: tokenAnswer('access_token refresh_token token_type scope', { token_type: 'Bearer' }),
    error: oauthErrors({}, 401),
    api: [postRoute('https://api.monday.com/v2', json(401, { errors: [{ message: 'Not Authenticated' }] }), answerQuery)],
    e2e: e2eCase(
      'POST /v2',
      { data: { me: ME } },
      {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ me { id name } }' }),
        refreshes: true,
        failure: 'refused-code',
      },
    ),
  });
}
