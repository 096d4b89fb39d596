/**
 * Etsy Open API v3, as its docs describe it:
 * - https://developers.etsy.com/documentation/essentials/authentication: GET https://www.etsy.com/oauth/connect with
 *   `response_type=code`, `client_id` (the app's API key keystring), `redirect_uri` (https), `scope` (space
 *   separated), `state`, `code_challenge` and `code_challenge_method=S256` (PKCE is required); the redirect back
 *   carries `code` and `state`; POST https://api.etsy.com/v3/public/oauth/token with `grant_type=authorization_code`,
 *   `client_id`, `redirect_uri`, `code`, `code_verifier` (no client secret); a refresh with
 *   `grant_type=refresh_token`, `client_id`, `refresh_token`; the answer `access_token` (the user's numeric ID, a
 *   period, the token), `token_type: "Bearer"`, `expires_in: 3600`, `refresh_token`.
 * - https://developers.etsy.com/documentation/essentials/requests: every request to https://api.etsy.com/v3/ carries
 *   the app's API key in `x-api-key`, and `Authorization: Bearer <token>` where the endpoint needs an OAuth scope.
 *   Since February 9, 2026 the key is `keystring:shared_secret` (Etsy's announcement,
 *   https://github.com/etsy/open-api/discussions/1529); a request with the keystring alone is refused, 403
 *   `{"error": "Shared secret is required in x-api-key header."}` (as Etsy answers it, quoted in the issues of its
 *   clients, e.g. https://github.com/anitabyte/etsyv3/issues/31), and a key in another form with 403 `{"error":
 *   "Invalid API key: should be in the format 'keystring:shared_secret'."}` (https://github.com/HelpCode-ai/anythingmcp/pull/637).
 * - getMe (GET /v3/application/users/me) answers `{"user_id", "shop_id"}`.
 * Silent (in the pages read): the token endpoint's error words (RFC 6749 codes here, without a description), the
 * answer to an invalid bearer token (401 `{"error": "invalid_token"}` here), whether a refresh leaves the old refresh
 * token valid (the simulator rotates it: the stricter reading), what a denied consent sends (the test provokes a
 * refused code).
 */
import { e2eCase, json, oauth2Provider, oauthErrors, opaqueClient, route, tokenAnswer, type ProviderSimulator } from './framework.js';

const USER_ID = 12345678;
const SHOP_ID = 87654321;

export function etsy(): ProviderSimulator {
  const client = opaqueClient(12, 5);

  return oauth2Provider({
    manifest: 'etsy',
    docs: [
      'https://developers.etsy.com/documentation/essentials/authentication',
      'https://developers.etsy.com/documentation/essentials/requests',
    ],
    client,
    authorize: {
      url: 'https://www.etsy.com/oauth/connect',
      provider: 'Etsy',
      // PKCE is required, and only S256.
      check: (req) =>
        req.query.get('code_challenge') && req.query.get('code_challenge_method') === 'S256' && req.query.get('scope')
          ? undefined
          : { status: 400, headers: { 'content-type': 'text/plain' }, body: 'code_challenge (S256) and scope are required' },
    },
    token: {
      url: 'https://api.etsy.com/v3/public/oauth/token',
      auth: 'none',
      pkceRequired: true,
      refresh: { rotate: true },
      accessPrefix: `${USER_ID}.`,
      refreshPrefix: `${USER_ID}.`,
    },
    answer: tokenAnswer('access_token token_type expires_in refresh_token', { token_type: 'Bearer', expires_in: 3600 }),
    error: oauthErrors({}),
    api: (grants) => [
      route('GET https://api.etsy.com/v3/application/users/me', (req) => {
        const key = req.headers['x-api-key'];
        if (key === client.clientId) return json(403, { error: 'Shared secret is required in x-api-key header.' });
        if (key !== `${client.clientId}:${client.clientSecret}`)
          return json(403, { error: "Invalid API key: should be in the format 'keystring:shared_secret'." });
        const auth = req.headers.authorization;
        return auth?.startsWith('Bearer ') && grants.validAccess(auth.slice(7))
          ? json(200, { user_id: USER_ID, shop_id: SHOP_ID })
          : json(401, { error: 'invalid_token' });
      }),
    ],
    e2e: e2eCase(
      'GET /v3/application/users/me',
      { user_id: USER_ID, shop_id: SHOP_ID },
      {
        scopes: ['shops_r'],
        refreshes: true,
        failure: 'refused-code',
      },
    ),
  });
}
