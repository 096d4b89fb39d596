/**
 * GitLab (GitLab.com), as its docs describe it:
 * - https://docs.gitlab.com/api/oauth2/ (GET https://gitlab.example.com/oauth/authorize with `client_id`,
 *   `redirect_uri`, `response_type=code`, `state`, `scope` (space separated), optional PKCE; the redirect back:
 *   `code` and `state`; POST /oauth/token, a form with `client_id`, `client_secret`, `code`, `grant_type`,
 *   `redirect_uri` (HTTP Basic is shown for registered applications too); the answer: `access_token`,
 *   `token_type: "bearer"`, `expires_in: 7200`, `refresh_token`, `created_at`; a refresh "invalidates the existing
 *   `access_token` and `refresh_token`" and sends new ones; errors are RFC 6749 §5.2's `{"error",
 *   "error_description"}`, as the page says of its token endpoint)
 * - https://docs.gitlab.com/api/oauth2/#access-gitlab-api-with-access-token (GET /api/v4/user with
 *   `Authorization: Bearer`)
 * - https://docs.gitlab.com/api/users/ (the current user: `id`, `username`, `name`, `state`, `web_url`)
 * - https://docs.gitlab.com/api/rest/troubleshooting/ (401 Unauthorized for a missing or invalid token; the body is
 *   `{"message": "401 Unauthorized"}`)
 * Silent: the words of a refused consent (the redirect carries RFC 6749's `error=access_denied`) and each error's
 * description (RFC 6749's own are sent).
 */
import type { ProviderSimulator } from './framework.js';
import { e2eCase, getRoute, json, nowSeconds, oauth2Provider, opaque, opaqueClient, rfc6749Errors, tokenAnswer } from './framework.js';

const USER = { id: 1, username: 'john_smith', name: 'John Smith', state: 'active', web_url: 'https://gitlab.com/john_smith' };

export function gitlab(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'gitlab',
    docs: ['https://docs.gitlab.com/api/oauth2/', 'https://docs.gitlab.com/api/users/'],
    client: opaqueClient(32, opaque('gloas-', 32)),
    authorize: { url: 'https://gitlab.com/oauth/authorize', provider: 'GitLab' },
    token: { url: 'https://gitlab.com/oauth/token', auth: 'either', refresh: { rotate: true } },
    answer: tokenAnswer('access_token token_type expires_in refresh_token created_at', {
      token_type: 'bearer',
      expires_in: 7200,
      created_at: nowSeconds,
    }),
    error: rfc6749Errors(401),
    api: [getRoute('https://gitlab.com/api/v4/user', json(401, { message: '401 Unauthorized' }), json(200, USER))],
    e2e: e2eCase('GET /api/v4/user', { id: 1, username: 'john_smith' }, { refreshes: true, failure: 'refused-code' }),
  });
}
