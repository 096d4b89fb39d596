/**
 * Airtable, as its docs describe it:
 * - https://airtable.com/developers/web/api/oauth-reference (GET https://airtable.com/oauth2/v1/authorize with
 *   `client_id`, `redirect_uri`, `response_type=code`, `scope` (space separated), `state`, and PKCE, required:
 *   `code_challenge` with `code_challenge_method=S256`; the redirect back: `code` and `state`, or `error`
 *   (`access_denied`), `error_description` and `state`; POST https://airtable.com/oauth2/v1/token, a form with
 *   `code`, `redirect_uri`, `grant_type`, `code_verifier`, and HTTP Basic for a client with a secret; the answer:
 *   `access_token`, `refresh_token`, `token_type: "Bearer"`, `scope`, `expires_in: 3600`, `refresh_expires_in`;
 *   a refresh rotates the refresh token; errors: 400 `{"error": "invalid_grant", "error_description": ...}`)
 * - https://airtable.com/developers/web/api/get-user-id-scopes (GET /v0/meta/whoami: `id`, `scopes`; a bad token:
 *   401 `{"error": {"type": "AUTHENTICATION_REQUIRED", "message": ...}}`)
 */
import type { ProviderSimulator } from './framework.js';
import { e2eCase, getRoute, json, oauth2Provider, oauthErrors, opaqueClient, redirect, tokenAnswer } from './framework.js';

const USER_ID = 'usrL2PNC5o3H4lBEi';

export function airtable(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'airtable',
    docs: ['https://airtable.com/developers/web/api/oauth-reference', 'https://airtable.com/developers/web/api/get-user-id-scopes'],
    client: opaqueClient('5f0a1b2c-3d4e-4f5a-8b6c-7d8e9f0a1b2c', 32),
    authorize: {
      url: 'https://airtable.com/oauth2/v1/authorize',
      provider: 'Airtable',
      invalid: () => ({ status: 400, headers: { 'content-type': 'text/html' }, body: '<h1>Invalid client_id</h1>' }),
      check: (req, redirectUri, st) =>
        !req.query.get('code_challenge') || req.query.get('code_challenge_method') !== 'S256'
          ? redirect(redirectUri, { error: 'invalid_request', error_description: 'code_challenge is required', state: st })
          : undefined,
      denied: { error: 'access_denied', error_description: 'The user denied the request' },
    },
    token: {
      url: 'https://airtable.com/oauth2/v1/token',
      // A client with a secret authenticates with HTTP Basic.
      auth: 'basic',
      pkceRequired: true,
      accessPrefix: `${USER_ID}.v1.`,
      refreshPrefix: `${USER_ID}.v1.`,
      refresh: { rotate: true },
    },
    answer: tokenAnswer('access_token refresh_token token_type scope expires_in refresh_expires_in', {
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_expires_in: 5184000,
    }),
    error: oauthErrors(
      {
        client: 'Client authentication failed',
        grant: 'Invalid authorization code',
        pkce: 'Invalid code_verifier',
        refresh: 'Invalid refresh token',
      },
      401,
    ),
    api: [
      getRoute(
        'https://api.airtable.com/v0/meta/whoami',
        json(401, { error: { type: 'AUTHENTICATION_REQUIRED', message: 'Authentication required' } }),
        json(200, { id: USER_ID, scopes: ['data.records:read', 'schema.bases:read'] }),
      ),
    ],
    e2e: e2eCase('GET /v0/meta/whoami', { id: USER_ID }, { refreshes: true, failure: 'denied' }),
  });
}
