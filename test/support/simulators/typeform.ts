/**
 * Typeform, as its docs describe it:
 * - https://www.typeform.com/developers/get-started/applications/ (OAuth 2.0 for the Create, Responses and Webhooks
 *   APIs, the access token in the Authorization header; `urlAuthorize` https://api.typeform.com/oauth/authorize,
 *   `urlAccessToken` https://api.typeform.com/oauth/token; the app's `client_id` and `client_secret` are "used during
 *   the OAuth 2.0 process to generate an access token")
 * - https://github.com/Typeform/js-api-client/issues/53 (Typeform's developer advocate: "On the OAuth payload, we send
 *   back an expires_in property", default 7 days, "We also send back a refresh_token that needs to be used to request
 *   a new token")
 * - https://nango.dev/docs/api-integrations/typeform/how-to-register-your-own-typeform-api-oauth-app (the `offline`
 *   scope makes Typeform issue a refresh token: the manifest's default scopes carry it)
 * - https://search.r-project.org/CRAN/refmans/rtypeform/html/get_me.html (GET https://api.typeform.com/me, "Retrieve
 *   your own account information": it "Returns alias, email and language"; Typeform's own reference page for it is
 *   not among the stored pages)
 * Silent (in the pages stored here): the token request's client authentication (the simulator takes it in the form,
 * the manifest's default), the token answer beyond `access_token`, `expires_in` and `refresh_token` (no
 * `token_type` or `scope` is sent), whether a refresh retires the old refresh token (the simulator retires it, the
 * stricter reading), the redirect of a refused consent and the token errors (RFC 6749's `error=access_denied` and
 * §5.2's `error`; the end-to-end test provokes a refused code), and the body of the API's 401 (none is sent).
 */
import { e2eCase, getRoute, json, oauth2Provider, oauthErrors, opaqueClient, tokenAnswer, type ProviderSimulator } from './framework.js';

const ACCOUNT = { alias: 'Ada Lovelace', email: 'ada@example.com', language: 'en' };

export function typeform(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'typeform',
    docs: [
      'https://www.typeform.com/developers/get-started/applications/',
      'https://github.com/Typeform/js-api-client/issues/53',
      'https://search.r-project.org/CRAN/refmans/rtypeform/html/get_me.html',
    ],
    client: opaqueClient(22, 22),
    authorize: { url: 'https://api.typeform.com/oauth/authorize', provider: 'Typeform' },
    token: { url: 'https://api.typeform.com/oauth/token', auth: 'body', refresh: { rotate: true } },
    answer: tokenAnswer('access_token expires_in refresh_token', { expires_in: 604_800 }),
    error: oauthErrors({}),
    api: [getRoute('https://api.typeform.com/me', { status: 401 }, json(200, ACCOUNT))],
    // The form asks for the API host (a choice with a default): the end user keeps the default and continues.
    e2e: e2eCase(
      'GET /me',
      { alias: ACCOUNT.alias, email: ACCOUNT.email },
      { typed: {}, expectConfig: { apiHost: 'api.typeform.com' }, refreshes: true, failure: 'refused-code' },
    ),
  });
}
