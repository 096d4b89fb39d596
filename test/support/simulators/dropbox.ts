/**
 * Dropbox, as its docs describe it:
 * - https://developers.dropbox.com/oauth-guide (GET https://www.dropbox.com/oauth2/authorize with `client_id`,
 *   `response_type=code`, `redirect_uri`, `state`, `token_access_type=offline`, `scope` (space separated); the
 *   redirect back: `code` and `state`, or `error=access_denied`, `error_description` and `state`)
 * - https://www.dropbox.com/developers/documentation/http/documentation#oauth2-token (POST
 *   https://api.dropboxapi.com/oauth2/token, a form, the app key and secret by HTTP Basic or as `client_id` and
 *   `client_secret`; the answer: `access_token` (sl....), `expires_in: 14400`, `token_type: "bearer"`, `scope`,
 *   `refresh_token`, `account_id`, `uid`; a refresh answers only `access_token`, `expires_in`, `token_type`; a bad
 *   code: 400 `{"error": "invalid_grant", "error_description": "code doesn't exist or has expired"}`)
 * - https://www.dropbox.com/developers/documentation/http/documentation#users-get_current_account (POST
 *   /2/users/get_current_account with no body; a bad token: 401 `{"error_summary": "invalid_access_token/...",
 *   "error": {".tag": "invalid_access_token"}}`)
 */
import type { ProviderSimulator } from './framework.js';
import {
  authServer,
  clientOf,
  consentPage,
  json,
  pendingFrom,
  pkceMatches,
  redirect,
  refreshField,
  route,
  withToken,
} from './framework.js';

const ACCOUNT_ID = 'dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc';

export function dropbox(): ProviderSimulator {
  const { state, grants } = authServer();
  const client = { clientId: 'a1b2c3d4e5f6g7h', clientSecret: 'z9y8x7w6v5u4t3s' };

  return {
    manifest: 'dropbox',
    hosts: ['www.dropbox.com', 'api.dropboxapi.com'],
    docs: [
      'https://developers.dropbox.com/oauth-guide',
      'https://www.dropbox.com/developers/documentation/http/documentation#oauth2-token',
      'https://www.dropbox.com/developers/documentation/http/documentation#users-get_current_account',
    ],
    client,
    state,
    routes: [
      route('GET https://www.dropbox.com/oauth2/authorize', (req) => {
        if (req.query.get('client_id') !== client.clientId)
          return { status: 400, headers: { 'content-type': 'text/plain' }, body: 'Invalid client_id' };
        const redirectUri = req.query.get('redirect_uri')!;
        const st = req.query.get('state') ?? '';
        // token_access_type=offline asks for a refresh token; the grant remembers it.
        const code = grants.issueCode(pendingFrom(req, { offline: String(req.query.get('token_access_type') === 'offline') }));
        return consentPage(
          'Dropbox',
          redirect(redirectUri, { code, state: st }).headers!.location!,
          redirect(redirectUri, {
            error: 'access_denied',
            error_description: 'The user chose not to give your app access to their Dropbox account.',
            state: st,
          }).headers!.location!,
        );
      }),
      route('POST https://api.dropboxapi.com/oauth2/token', (req) => {
        const c = clientOf(req);
        if (c.clientId !== client.clientId || c.clientSecret !== client.clientSecret)
          return json(400, { error: 'invalid_client', error_description: 'Invalid client_id or client_secret' });
        if (req.form.get('grant_type') === 'refresh_token') {
          const grant = grants.takeRefresh(req.form.get('refresh_token'), false);
          if (!grant) return json(400, { error: 'invalid_grant', error_description: 'refresh token is malformed' });
          const { accessToken } = grants.issueTokens(grant, { accessPrefix: 'sl.u.' });
          return json(200, { access_token: accessToken, expires_in: 14400, token_type: 'bearer' });
        }
        if (req.form.get('grant_type') !== 'authorization_code') return json(400, { error: 'unsupported_grant_type' });
        const grant = grants.takeCode(req.form.get('code'));
        if (!grant || !pkceMatches(grant, req.form.get('code_verifier')))
          return json(400, { error: 'invalid_grant', error_description: "code doesn't exist or has expired" });
        if (req.form.get('redirect_uri') !== grant.redirectUri)
          return json(400, { error: 'invalid_grant', error_description: 'redirect_uri mismatch' });
        const offline = grant.extra.offline === 'true';
        const { accessToken, refreshToken } = grants.issueTokens(grant, { accessPrefix: 'sl.u.', refresh: offline });
        return json(200, {
          access_token: accessToken,
          expires_in: 14400,
          token_type: 'bearer',
          scope: grant.scope || 'account_info.read',
          ...refreshField({ refreshToken }),
          account_id: ACCOUNT_ID,
          uid: '12345',
        });
      }),
      route(
        'POST https://api.dropboxapi.com/2/users/get_current_account',
        withToken(grants, json(401, { error_summary: 'invalid_access_token/...', error: { '.tag': 'invalid_access_token' } }), () =>
          json(200, {
            account_id: ACCOUNT_ID,
            name: {
              given_name: 'Franz',
              surname: 'Ferdinand',
              familiar_name: 'Franz',
              display_name: 'Franz Ferdinand (Personal)',
              abbreviated_name: 'FF',
            },
            email: 'franz@dropbox.com',
            email_verified: true,
            disabled: false,
            country: 'US',
            locale: 'en',
            is_paired: false,
            account_type: { '.tag': 'basic' },
            root_info: { '.tag': 'user', root_namespace_id: '3235641', home_namespace_id: '3235641' },
          }),
        ),
      ),
    ],
    e2e: {
      expectConfig: {},
      api: { method: 'POST', path: '/2/users/get_current_account', answer: { account_id: ACCOUNT_ID } },
      refreshes: true,
      failure: 'denied',
    },
  };
}
