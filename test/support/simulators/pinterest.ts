/**
 * Pinterest (API v5), as its docs describe it:
 * - https://github.com/pinterest/api-description (v5/openapi.json, Pinterest's OpenAPI description, December 2025: the
 *   OAuth2 scheme's `authorizationUrl` https://www.pinterest.com/oauth/ and `tokenUrl`
 *   https://api.pinterest.com/v5/oauth/token; POST /oauth/token is form-encoded with HTTP Basic client authentication;
 *   a code grant sends `grant_type`, `code`, `redirect_uri`, a refresh `grant_type`, `refresh_token` and maybe
 *   `scope`; the answer (OauthAccessTokenResponseCode / ...Refresh): `access_token`, `token_type: "bearer"`,
 *   `expires_in`, `scope`, `response_type`, and `refresh_token`, `refresh_token_expires_in`,
 *   `refresh_token_expires_at` (required in a refresh's answer); "the continuous refresh token (60-day expiration,
 *   refreshable indefinitely)", which apps activated since September 25, 2025 use without asking; errors are
 *   `{"code": integer, "message"}`, a 401 `{"code": 2, "message": "Authentication failed."}`; GET /user_account: the
 *   Account, `account_type`, `id`, `profile_image`, `username`, `website_url`, ...)
 * - https://developers.pinterest.com/docs/getting-started/set-up-authentication-and-authorization/ (the app ID and
 *   secret, the redirect URI the user comes back to with an authorization code, the scopes)
 * Silent: the redirect of a refused consent (the end-to-end test provokes a refused code), the status and `code` of
 * each token error (the simulator answers 400 with a short message, `code` 1), whether a refresh retires the previous
 * refresh token (the simulator retires it, the stricter reading).
 */
import { e2eCase, getRoute, json, nowSeconds, oauth2Provider, opaqueClient, tokenAnswer, type ProviderSimulator } from './framework.js';

const ACCOUNT = {
  account_type: 'BUSINESS',
  id: '2783136121146311751',
  profile_image: 'https://i.pinimg.com/280x280_RS/ada.jpg',
  username: 'adalovelace',
  website_url: 'https://example.com',
};

export function pinterest(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'pinterest',
    docs: [
      'https://github.com/pinterest/api-description',
      'https://developers.pinterest.com/docs/getting-started/set-up-authentication-and-authorization/',
    ],
    client: opaqueClient(String(1_400_000 + Math.floor(Math.random() * 100_000)), 20),
    authorize: { url: 'https://www.pinterest.com/oauth/', provider: 'Pinterest' },
    token: {
      url: 'https://api.pinterest.com/v5/oauth/token',
      auth: 'basic',
      refresh: { rotate: true },
    },
    answer: tokenAnswer(
      'access_token token_type expires_in scope response_type refresh_token refresh_token_expires_in refresh_token_expires_at',
      {
        token_type: 'bearer',
        expires_in: 2_592_000,
        // The grant type answered.
        response_type: (i) => i.kind,
        refresh_token_expires_in: 5_184_000,
        refresh_token_expires_at: () => nowSeconds() + 5_184_000,
      },
    ),
    error: (_code, description) => json(400, { code: 1, message: description }),
    api: [
      getRoute('https://api.pinterest.com/v5/user_account', json(401, { code: 2, message: 'Authentication failed.' }), json(200, ACCOUNT)),
    ],
    e2e: e2eCase('GET /v5/user_account', { id: ACCOUNT.id, username: ACCOUNT.username }, { refreshes: true, failure: 'refused-code' }),
  });
}
