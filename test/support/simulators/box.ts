/**
 * Box, as its docs describe it:
 * - https://developer.box.com/guides/authentication/oauth2/ (GET https://account.box.com/api/oauth2/authorize with
 *   `response_type=code`, `client_id`, `redirect_uri`, `state`; the redirect back: `code` and `state`, or
 *   `error=access_denied`, `error_description` and `state`)
 * - https://developer.box.com/reference/post-oauth2-token/ (POST https://api.box.com/oauth2/token, a form with
 *   `client_id`, `client_secret`, `code` or `refresh_token`, `grant_type`; a refresh token is single use; a bad code:
 *   400 `{"error": "invalid_grant", "error_description": "Auth code doesn't exist or is invalid for the client"}`)
 * - https://developer.box.com/reference/resources/access-token (the answer: `access_token`, `expires_in`,
 *   `token_type: "bearer"`, `restricted_to`, `refresh_token`; `issued_token_type` only for downscoped tokens)
 * - https://developer.box.com/reference/get-users-me/ (GET /2.0/users/me; a bad token: 401 with an empty body and
 *   `WWW-Authenticate: Bearer realm="Service", error="invalid_token"`)
 * - https://developer.box.com/guides/api-calls/permissions-and-errors/common-errors/ (403 `insufficient_scope`, "The
 *   request requires higher privileges than provided by the access token.": the app's scopes do not cover the call)
 *   and https://support.box.com/hc/en-us/community/posts/360049137234 (Box's answer carries
 *   `WWW-Authenticate: Bearer realm="Service", error="insufficient_scope", error_description="..."`, no `scope`)
 * - https://developer.box.com/reference/get-users/ (GET /2.0/users, the enterprise's users: needs the "Manage users"
 *   scope, which the simulated app does not have)
 */
import type { ProviderSimulator } from './framework.js';
import { e2eCase, getRoute, html, json, oauth2Provider, oauthErrors, opaque, opaqueClient, tokenAnswer } from './framework.js';

export function box(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'box',
    docs: [
      'https://developer.box.com/guides/authentication/oauth2/',
      'https://developer.box.com/reference/post-oauth2-token/',
      'https://developer.box.com/reference/resources/access-token',
      'https://developer.box.com/reference/get-users-me/',
    ],
    client: opaqueClient(16, 16),
    authorize: {
      url: 'https://account.box.com/api/oauth2/authorize',
      provider: 'Box',
      invalid: () => html(400, '<h1>Invalid client_id parameter or redirect_uri</h1>'),
      denied: { error: 'access_denied', error_description: 'The user denied access to your application' },
    },
    token: { url: 'https://api.box.com/oauth2/token', auth: 'either', refresh: { rotate: true } },
    answer: tokenAnswer('access_token expires_in token_type restricted_to refresh_token', {
      expires_in: 3600,
      token_type: 'bearer',
      restricted_to: [],
    }),
    error: oauthErrors({
      client: 'The client credentials are invalid',
      grant: "Auth code doesn't exist or is invalid for the client",
      refresh: 'Invalid refresh token',
      grant_type: 'Grant type is not supported',
    }),
    api: [
      getRoute(
        'https://api.box.com/2.0/users/me',
        {
          status: 401,
          headers: {
            'www-authenticate': 'Bearer realm="Service", error="invalid_token", error_description="The access token provided is invalid."',
          },
        },
        json(200, {
          id: '11446498',
          type: 'user',
          name: 'Aaron Levie',
          login: 'ceo@example.com',
          created_at: '2012-12-12T10:53:43-08:00',
          modified_at: '2012-12-12T10:53:43-08:00',
          language: 'en',
          timezone: 'Africa/Bujumbura',
          space_amount: 11345156112,
          space_used: 1237009912,
          max_upload_size: 2147483648,
          status: 'active',
        }),
      ),
      getRoute(
        'https://api.box.com/2.0/users',
        { status: 401, headers: { 'www-authenticate': 'Bearer realm="Service", error="invalid_token"' } },
        () => ({
          ...json(403, {
            type: 'error',
            status: 403,
            code: 'insufficient_scope',
            help_url: 'https://developer.box.com/guides/api-calls/permissions-and-errors/common-errors/',
            message: 'The request requires higher privileges than provided by the access token.',
            request_id: opaque('', 8),
          }),
          headers: {
            'content-type': 'application/json',
            'www-authenticate':
              'Bearer realm="Service", error="insufficient_scope", error_description="The request requires higher privileges than provided by the access token."',
          },
        }),
      ),
    ],
    e2e: e2eCase('GET /2.0/users/me', { id: '11446498', type: 'user' }, { refreshes: true, failure: 'refused-code' }),
  });
}
