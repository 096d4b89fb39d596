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
import {
  Grants,
  bearerOf,
  clientOf,
  consentPage,
  json,
  newState,
  opaque,
  pendingFrom,
  pkceMatches,
  redirect,
  type PendingCode,
  type ProviderSimulator,
} from './framework.js';

const USER_ID = 'usrL2PNC5o3H4lBEi';

export function airtable(): ProviderSimulator {
  const state = newState();
  const grants = new Grants(state);
  const client = { clientId: '5f0a1b2c-3d4e-4f5a-8b6c-7d8e9f0a1b2c', clientSecret: opaque('', 32) };

  const tokenAnswer = (grant: PendingCode) => {
    const { accessToken, refreshToken } = grants.issueTokens(grant, {
      accessPrefix: `${USER_ID}.v1.`,
      refreshPrefix: `${USER_ID}.v1.`,
      refresh: true,
    });
    return json(200, {
      access_token: accessToken,
      refresh_token: refreshToken,
      token_type: 'Bearer',
      scope: grant.scope,
      expires_in: 3600,
      refresh_expires_in: 5184000,
    });
  };

  return {
    manifest: 'airtable',
    hosts: ['airtable.com', 'api.airtable.com'],
    docs: ['https://airtable.com/developers/web/api/oauth-reference', 'https://airtable.com/developers/web/api/get-user-id-scopes'],
    client,
    state,
    routes: [
      {
        method: 'GET',
        host: 'airtable.com',
        path: '/oauth2/v1/authorize',
        handler: (req) => {
          const redirectUri = req.query.get('redirect_uri')!;
          const st = req.query.get('state') ?? '';
          if (req.query.get('client_id') !== client.clientId)
            return { status: 400, headers: { 'content-type': 'text/html' }, body: '<h1>Invalid client_id</h1>' };
          if (!req.query.get('code_challenge') || req.query.get('code_challenge_method') !== 'S256')
            return redirect(redirectUri, { error: 'invalid_request', error_description: 'code_challenge is required', state: st });
          const code = grants.issueCode(pendingFrom(req));
          return consentPage(
            'Airtable',
            redirect(redirectUri, { code, state: st }).headers!.location!,
            redirect(redirectUri, { error: 'access_denied', error_description: 'The user denied the request', state: st }).headers!
              .location!,
          );
        },
      },
      {
        method: 'POST',
        host: 'airtable.com',
        path: '/oauth2/v1/token',
        handler: (req) => {
          // A client with a secret authenticates with HTTP Basic.
          const c = clientOf(req);
          if (c.via !== 'basic' || c.clientId !== client.clientId || c.clientSecret !== client.clientSecret)
            return json(401, { error: 'invalid_client', error_description: 'Client authentication failed' });
          if (req.form.get('grant_type') === 'refresh_token') {
            const grant = grants.takeRefresh(req.form.get('refresh_token'), true);
            return grant ? tokenAnswer(grant) : json(400, { error: 'invalid_grant', error_description: 'Invalid refresh token' });
          }
          if (req.form.get('grant_type') !== 'authorization_code') return json(400, { error: 'unsupported_grant_type' });
          const grant = grants.takeCode(req.form.get('code'));
          if (!grant || req.form.get('redirect_uri') !== grant.redirectUri)
            return json(400, { error: 'invalid_grant', error_description: 'Invalid authorization code' });
          if (!req.form.get('code_verifier') || !pkceMatches(grant, req.form.get('code_verifier')))
            return json(400, { error: 'invalid_grant', error_description: 'Invalid code_verifier' });
          return tokenAnswer(grant);
        },
      },
      {
        method: 'GET',
        host: 'api.airtable.com',
        path: '/v0/meta/whoami',
        handler: (req) => {
          if (!grants.validAccess(bearerOf(req)))
            return json(401, { error: { type: 'AUTHENTICATION_REQUIRED', message: 'Authentication required' } });
          return json(200, { id: USER_ID, scopes: ['data.records:read', 'schema.bases:read'] });
        },
      },
    ],
    e2e: {
      expectConfig: {},
      api: { method: 'GET', path: '/v0/meta/whoami', answer: { id: USER_ID } },
      refreshes: true,
      failure: 'denied',
    },
  };
}
