/**
 * ClickUp, as its docs describe it:
 * - https://developer.clickup.com/docs/authentication (the authorization code grant; authorization URL
 *   https://app.clickup.com/api with `client_id` and `redirect_uri`, and optionally `state`; "Users will be redirected
 *   back to the redirect_uri with the authorization code"; the end user authorizes one or more Workspaces; access
 *   token URL https://api.clickup.com/api/v2/oauth/token; the token goes in the Authorization header)
 * - https://developer.clickup.com/reference/getaccesstoken (POST /v2/oauth/token with `client_id`, `client_secret`
 *   and `code`, which the reference names query parameters: the simulator reads them from the query or, as Latchkey
 *   sends them, a form body; the answer: `access_token`, which does not expire: no `expires_in`, no refresh token)
 * - https://developer.clickup.com/reference/getauthorizeduser (GET /v2/user: `{"user": {"id", "username", "email",
 *   "color", "profilePicture", "initials"}}`)
 * - https://developer.clickup.com/docs/common_errors (an unsuccessful request has a status other than 200 and "a JSON
 *   error message and error code", `{"err", "ECODE"}`; "Token not found": OAUTH_019, OAUTH_021, OAUTH_025, OAUTH_077;
 *   "Client Not Found": OAUTH_010; a redirect URI not registered: OAUTH_007)
 * Silent: the redirect of a refused authorization (the end-to-end test provokes a refused code instead), the status
 * and ECODE of a refused code (the simulator answers 400 with only an `err`), the words of each `err`.
 */
import { e2eCase, getRoute, json, oauth2Provider, opaqueClient, tokenAnswer, type ProviderSimulator } from './framework.js';

const USER = { id: 183, username: 'Ada Lovelace', email: 'ada@example.com', color: '#827718', profilePicture: null, initials: 'AL' };

export function clickup(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'clickup',
    docs: [
      'https://developer.clickup.com/docs/authentication',
      'https://developer.clickup.com/reference/getaccesstoken',
      'https://developer.clickup.com/reference/getauthorizeduser',
      'https://developer.clickup.com/docs/common_errors',
    ],
    client: opaqueClient(16, 32),
    authorize: { url: 'https://app.clickup.com/api', provider: 'ClickUp' },
    token: {
      url: 'https://api.clickup.com/api/v2/oauth/token',
      // The reference's query parameters, or the same in a form body.
      wrap: (token) => (req) => token(req.form.size ? req : { ...req, form: req.query }),
      auth: 'body',
      refresh: false,
    },
    answer: tokenAnswer('access_token'),
    error: (_code, _description, why) =>
      why === 'client'
        ? json(401, { err: 'Client not found', ECODE: 'OAUTH_010' })
        : why === 'redirect'
          ? json(400, { err: 'Redirect URI does not match the redirect uris of this application', ECODE: 'OAUTH_007' })
          : json(400, { err: 'Code not found' }),
    api: [
      getRoute('https://api.clickup.com/api/v2/user', json(401, { err: 'Token not found', ECODE: 'OAUTH_025' }), json(200, { user: USER })),
    ],
    e2e: e2eCase('GET /api/v2/user', { user: { id: USER.id, username: USER.username } }, { refreshes: false, failure: 'refused-code' }),
  });
}
