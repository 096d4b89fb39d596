/**
 * Calendly, as its docs describe it:
 * - https://developer.calendly.com/docs/authentication/how-to-access-calendly-data-on-behalf-of-authenticated-users
 *   (GET https://auth.calendly.com/oauth/authorize with `client_id`, `response_type=code`, `redirect_uri`; the
 *   redirect back: `code`; access tokens last 2 hours, refresh tokens until used)
 * - https://developer.calendly.com/api-docs/calendly-o-auth/o-auth/post-oauth-refresh-token (POST
 *   https://auth.calendly.com/oauth/token, a form, HTTP Basic for web clients; the answer: `token_type: "Bearer"`,
 *   `expires_in: 7200`, `created_at`, `refresh_token`, `access_token`, `scope`, `owner` (the user's URI),
 *   `organization` (the organization's URI); a refresh is single use; errors: 400 `{"error": "invalid_grant",
 *   "error_description": ...}`)
 * - https://developer.calendly.com/api-docs/users/get-current-user (GET /users/me: `{"resource": {...}}`; a bad
 *   token: 401 `{"title": "Unauthenticated", "message": "The access token is invalid"}`)
 */
import type { ProviderSimulator } from './framework.js';
import { e2eCase, getRoute, html, json, nowSeconds, oauth2Provider, opaqueClient, rfc6749Errors, tokenAnswer } from './framework.js';

const OWNER = 'https://api.calendly.com/users/EBHAAFHDCAEQTSEZ';
const ORGANIZATION = 'https://api.calendly.com/organizations/AAAAAAAAAAAAAAAA';

export function calendly(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'calendly',
    docs: [
      'https://developer.calendly.com/docs/authentication/how-to-access-calendly-data-on-behalf-of-authenticated-users',
      'https://developer.calendly.com/api-docs/calendly-o-auth/o-auth/post-oauth-refresh-token',
      'https://developer.calendly.com/api-docs/users/get-current-user',
    ],
    client: opaqueClient(20, 32),
    authorize: {
      url: 'https://auth.calendly.com/oauth/authorize',
      provider: 'Calendly',
      invalid: () => html(400, '<h1>The client identifier provided is invalid.</h1>'),
      denied: { error: 'access_denied', error_description: 'The resource owner or authorization server denied the request.' },
    },
    token: { url: 'https://auth.calendly.com/oauth/token', auth: 'basic', accessPrefix: 'eyJraWQiOiIx', refresh: { rotate: true } },
    answer: tokenAnswer('token_type expires_in created_at refresh_token access_token scope owner organization', {
      token_type: 'Bearer',
      expires_in: 7200,
      created_at: nowSeconds,
      scope: 'default',
      owner: OWNER,
      organization: ORGANIZATION,
    }),
    error: rfc6749Errors(401),
    api: [
      getRoute(
        'https://api.calendly.com/users/me',
        json(401, { title: 'Unauthenticated', message: 'The access token is invalid' }),
        json(200, {
          resource: {
            uri: OWNER,
            name: 'John Doe',
            slug: 'acmesales',
            email: 'test@example.com',
            scheduling_url: 'https://calendly.com/acmesales',
            timezone: 'America/New York',
            avatar_url: null,
            created_at: '2019-01-02T03:04:05.678123Z',
            updated_at: '2019-08-07T06:05:04.321123Z',
            current_organization: ORGANIZATION,
            resource_type: 'User',
            locale: 'en',
          },
        }),
      ),
    ],
    // Nothing typed: the user and organization URIs come back in the token answer.
    e2e: e2eCase(
      'GET /users/me',
      { resource: { uri: OWNER, current_organization: ORGANIZATION } },
      {
        expectConfig: { owner: OWNER, organization: ORGANIZATION },
        refreshes: true,
        failure: 'refused-code',
      },
    ),
  });
}
