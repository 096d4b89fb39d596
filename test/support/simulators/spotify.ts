/**
 * Spotify, as its docs describe it:
 * - https://developer.spotify.com/documentation/web-api/tutorials/code-flow (GET https://accounts.spotify.com/authorize
 *   with `client_id`, `response_type=code`, `redirect_uri`, `state`, `scope` (space separated); the redirect back:
 *   `code` and `state`, or `error=access_denied` and `state`; POST https://accounts.spotify.com/api/token, a form
 *   with `grant_type`, `code`, `redirect_uri` and `Authorization: Basic <base64 client_id:client_secret>`; the answer:
 *   `access_token`, `token_type: "Bearer"`, `scope`, `expires_in: 3600`, `refresh_token`)
 * - https://developer.spotify.com/documentation/web-api/tutorials/refreshing-tokens (the same endpoint with
 *   `grant_type=refresh_token`; "When a refresh token is not returned, continue using the existing token": the
 *   simulator answers without one, so the stored one must be kept)
 * - https://developer.spotify.com/documentation/web-api/reference/get-current-users-profile (GET
 *   https://api.spotify.com/v1/me: `display_name`, `id`, `type: "user"`, `uri`, ...; 401 "Bad or expired token")
 * - https://developer.spotify.com/documentation/web-api/concepts/api-calls (the regular error object of the Web API:
 *   `{"error": {"status", "message"}}`; the authentication error object of the accounts service: `{"error",
 *   "error_description"}`, e.g. `invalid_client`, "Invalid client secret")
 * Silent: each token error's words beyond that example (the simulator's are short RFC 6749-like phrases).
 */
import { e2eCase, getRoute, json, oauth2Provider, oauthErrors, opaqueClient, tokenAnswer, type ProviderSimulator } from './framework.js';

const USER = {
  display_name: 'Ada Lovelace',
  id: 'ada.lovelace',
  type: 'user',
  uri: 'spotify:user:ada.lovelace',
  href: 'https://api.spotify.com/v1/users/ada.lovelace',
  country: 'GB',
  product: 'premium',
};

export function spotify(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'spotify',
    docs: [
      'https://developer.spotify.com/documentation/web-api/tutorials/code-flow',
      'https://developer.spotify.com/documentation/web-api/tutorials/refreshing-tokens',
      'https://developer.spotify.com/documentation/web-api/reference/get-current-users-profile',
    ],
    client: opaqueClient(16, 16),
    authorize: { url: 'https://accounts.spotify.com/authorize', provider: 'Spotify', denied: { error: 'access_denied' } },
    token: {
      url: 'https://accounts.spotify.com/api/token',
      auth: 'basic',
      // A refresh answer without `refresh_token`: the docs allow it ("continue using the existing token").
      refresh: { rotate: false },
    },
    answer: tokenAnswer('access_token token_type scope expires_in refresh_token', { token_type: 'Bearer', expires_in: 3600 }),
    error: oauthErrors({
      client: 'Invalid client secret',
      code: 'Invalid authorization code',
      redirect: 'Invalid redirect URI',
      pkce: 'code_verifier was incorrect',
      refresh: 'Invalid refresh token',
    }),
    api: [
      getRoute('https://api.spotify.com/v1/me', json(401, { error: { status: 401, message: 'Invalid access token' } }), json(200, USER)),
    ],
    e2e: e2eCase('GET /v1/me', { id: USER.id, type: 'user' }, { refreshes: true, failure: 'denied' }),
  });
}
