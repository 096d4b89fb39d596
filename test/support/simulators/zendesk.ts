/**
 * Zendesk Support, as its docs describe it:
 * - https://developer.zendesk.com/documentation/ticketing/working-with-oauth/creating-and-using-oauth-tokens-with-the-api/
 *   (GET https://{subdomain}.zendesk.com/oauth/authorizations/new with `response_type=code`, `redirect_uri`,
 *   `client_id`, `scope` (space separated: `read write`), `state`; the redirect back: `code` and `state`, or
 *   `error=access_denied` and `error_description`; POST /oauth/tokens, JSON or form, with `grant_type`, `code`,
 *   `client_id`, `client_secret`, `redirect_uri`, `scope`; the answer: `access_token`, `token_type: "bearer"`,
 *   `scope`: no expiry and no refresh token for a token asked without `expires_in`)
 * - https://developer.zendesk.com/api-reference/ticketing/users/users/#show-self (GET /api/v2/users/me.json;
 *   a bad token: 401 `{"error": "invalid_token", "error_description": ...}`)
 */
import type { ProviderSimulator } from './framework.js';
import { e2eCase, getRoute, html, json, oauth2Provider, opaqueClient, rfc6749Errors, tokenAnswer } from './framework.js';

const SUBDOMAIN = 'acme-support';
const HOST = `${SUBDOMAIN}.zendesk.com`;

export function zendesk(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'zendesk',
    docs: [
      'https://developer.zendesk.com/documentation/ticketing/working-with-oauth/creating-and-using-oauth-tokens-with-the-api/',
      'https://developer.zendesk.com/api-reference/ticketing/users/users/#show-self',
    ],
    client: opaqueClient('latchkey_test_client', 32),
    authorize: {
      url: 'https://*.zendesk.com/oauth/authorizations/new',
      provider: 'Zendesk',
      wrap: (consent) => (req) => (req.host !== HOST ? html(404, '<h1>Oops! This help center no longer exists</h1>') : consent(req)),
      invalid: () => json(400, { error: 'invalid_client', error_description: 'Client authentication failed' }),
      denied: { error: 'access_denied', error_description: 'The end-user or authorization server denied the request.' },
    },
    token: {
      url: 'https://*.zendesk.com/oauth/tokens',
      // POST /oauth/tokens takes JSON (the docs' examples) or a form.
      auth: 'body',
      acceptsJson: true,
      refresh: false,
    },
    answer: tokenAnswer('access_token token_type scope', { token_type: 'bearer', scope: (i) => i.scope || 'read write' }),
    error: rfc6749Errors(401, { grant_type: 'The authorization grant type is not supported by the authorization server.' }),
    api: [
      getRoute(
        'https://*.zendesk.com/api/v2/users/me.json',
        json(401, {
          error: 'invalid_token',
          error_description: 'The access token provided is expired, revoked, malformed or invalid for other reasons.',
        }),
        json(200, {
          user: {
            id: 35436,
            url: `https://${HOST}/api/v2/users/35436.json`,
            name: 'Johnny Agent',
            email: 'johnny@example.com',
            role: 'agent',
            active: true,
            verified: true,
            time_zone: 'Copenhagen',
            locale: 'en-US',
          },
        }),
      ),
    ],
    // The subdomain is the one value the end user knows and types (it is in the authorize URL itself).
    e2e: e2eCase(
      'GET /api/v2/users/me.json',
      { user: { id: 35436, role: 'agent' } },
      {
        typed: { subdomain: SUBDOMAIN },
        expectConfig: { subdomain: SUBDOMAIN },
        refreshes: false,
        failure: 'denied',
      },
    ),
  });
}
