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
  redirect,
  type PendingCode,
  type ProviderSimulator,
} from './framework.js';

export function box(): ProviderSimulator {
  const state = newState();
  const grants = new Grants(state);
  const client = { clientId: opaque('', 16), clientSecret: opaque('', 16) };

  const tokenAnswer = (grant: PendingCode) => {
    const { accessToken, refreshToken } = grants.issueTokens(grant, { refresh: true });
    return json(200, { access_token: accessToken, expires_in: 3600, token_type: 'bearer', restricted_to: [], refresh_token: refreshToken });
  };

  return {
    manifest: 'box',
    hosts: ['account.box.com', 'api.box.com'],
    docs: [
      'https://developer.box.com/guides/authentication/oauth2/',
      'https://developer.box.com/reference/post-oauth2-token/',
      'https://developer.box.com/reference/resources/access-token',
      'https://developer.box.com/reference/get-users-me/',
    ],
    client,
    state,
    routes: [
      {
        method: 'GET',
        host: 'account.box.com',
        path: '/api/oauth2/authorize',
        handler: (req) => {
          if (req.query.get('client_id') !== client.clientId)
            return { status: 400, headers: { 'content-type': 'text/html' }, body: '<h1>Invalid client_id parameter or redirect_uri</h1>' };
          const redirectUri = req.query.get('redirect_uri')!;
          const st = req.query.get('state') ?? '';
          const code = grants.issueCode(pendingFrom(req));
          return consentPage(
            'Box',
            redirect(redirectUri, { code, state: st }).headers!.location!,
            redirect(redirectUri, { error: 'access_denied', error_description: 'The user denied access to your application', state: st })
              .headers!.location!,
          );
        },
      },
      {
        method: 'POST',
        host: 'api.box.com',
        path: '/oauth2/token',
        handler: (req) => {
          const c = clientOf(req);
          if (c.clientId !== client.clientId || c.clientSecret !== client.clientSecret)
            return json(400, { error: 'invalid_client', error_description: 'The client credentials are invalid' });
          if (req.form.get('grant_type') === 'refresh_token') {
            const grant = grants.takeRefresh(req.form.get('refresh_token'), true);
            return grant ? tokenAnswer(grant) : json(400, { error: 'invalid_grant', error_description: 'Invalid refresh token' });
          }
          if (req.form.get('grant_type') !== 'authorization_code')
            return json(400, { error: 'unsupported_grant_type', error_description: 'Grant type is not supported' });
          const grant = grants.takeCode(req.form.get('code'));
          return grant
            ? tokenAnswer(grant)
            : json(400, { error: 'invalid_grant', error_description: "Auth code doesn't exist or is invalid for the client" });
        },
      },
      {
        method: 'GET',
        host: 'api.box.com',
        path: '/2.0/users/me',
        handler: (req) => {
          if (!grants.validAccess(bearerOf(req)))
            return {
              status: 401,
              headers: {
                'www-authenticate':
                  'Bearer realm="Service", error="invalid_token", error_description="The access token provided is invalid."',
              },
            };
          return json(200, {
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
          });
        },
      },
    ],
    e2e: {
      expectConfig: {},
      api: { method: 'GET', path: '/2.0/users/me', answer: { id: '11446498', type: 'user' } },
      refreshes: true,
      failure: 'refused-code',
    },
  };
}
