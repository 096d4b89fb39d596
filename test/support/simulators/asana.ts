/**
 * Asana, as its docs describe it:
 * - https://developers.asana.com/docs/oauth (GET https://app.asana.com/-/oauth_authorize with `client_id`,
 *   `redirect_uri`, `response_type=code`, `state`, optional PKCE and `scope`; the redirect back: `code` and
 *   `state`, or `error=access_denied` and `state`; POST https://app.asana.com/-/oauth_token, a form with
 *   `grant_type`, `client_id`, `client_secret`, `redirect_uri`, `code`; the answer: `access_token`,
 *   `expires_in: 3600`, `token_type: "bearer"`, `data` (the user: `id`, `gid`, `name`, `email`), `refresh_token`;
 *   a refresh answers the same without `refresh_token` (the old one stays valid); a bad code: 400
 *   `{"error": "invalid_grant", "error_description": ...}`)
 * - https://developers.asana.com/reference/getuser (GET /api/1.0/users/me: `{"data": {...}}`; a bad token: 401
 *   `{"errors": [{"message": "Not Authorized"}]}`)
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

const USER = { id: 4673218951, gid: '4673218951', name: 'Greg Sanchez', email: 'gsanchez@example.com' };

export function asana(): ProviderSimulator {
  const state = newState();
  const grants = new Grants(state);
  const client = { clientId: '1201234567890123', clientSecret: opaque('', 16) };

  const tokenAnswer = (grant: PendingCode, withRefresh: boolean) => {
    const { accessToken, refreshToken } = grants.issueTokens(grant, {
      accessPrefix: '2/1201234567890123/',
      refreshPrefix: '2/1201234567890123/',
      refresh: withRefresh,
    });
    return json(200, {
      access_token: accessToken,
      expires_in: 3600,
      token_type: 'bearer',
      data: USER,
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
    });
  };

  return {
    manifest: 'asana',
    hosts: ['app.asana.com'],
    docs: ['https://developers.asana.com/docs/oauth', 'https://developers.asana.com/reference/getuser'],
    client,
    state,
    routes: [
      {
        method: 'GET',
        host: 'app.asana.com',
        path: '/-/oauth_authorize',
        handler: (req) => {
          const redirectUri = req.query.get('redirect_uri')!;
          const st = req.query.get('state') ?? '';
          if (req.query.get('client_id') !== client.clientId) return redirect(redirectUri, { error: 'invalid_client', state: st });
          const code = grants.issueCode(pendingFrom(req));
          return consentPage(
            'Asana',
            redirect(redirectUri, { code, state: st }).headers!.location!,
            redirect(redirectUri, { error: 'access_denied', state: st }).headers!.location!,
          );
        },
      },
      {
        method: 'POST',
        host: 'app.asana.com',
        path: '/-/oauth_token',
        handler: (req) => {
          const c = clientOf(req);
          if (c.clientId !== client.clientId || c.clientSecret !== client.clientSecret)
            return json(401, { error: 'invalid_client', error_description: 'The client_id or client_secret is invalid.' });
          if (req.form.get('grant_type') === 'refresh_token') {
            const grant = grants.takeRefresh(req.form.get('refresh_token'), false);
            return grant
              ? tokenAnswer(grant, false)
              : json(400, { error: 'invalid_grant', error_description: 'The refresh token is invalid.' });
          }
          if (req.form.get('grant_type') !== 'authorization_code') return json(400, { error: 'unsupported_grant_type' });
          const grant = grants.takeCode(req.form.get('code'));
          if (!grant || req.form.get('redirect_uri') !== grant.redirectUri || !pkceMatches(grant, req.form.get('code_verifier')))
            return json(400, { error: 'invalid_grant', error_description: 'The `code` is invalid or has expired.' });
          return tokenAnswer(grant, true);
        },
      },
      {
        method: 'GET',
        host: 'app.asana.com',
        path: '/api/1.0/users/me',
        handler: (req) => {
          if (!grants.validAccess(bearerOf(req)))
            return json(401, {
              errors: [
                {
                  message: 'Not Authorized',
                  help: 'For more information on API status codes and how to handle them, read the docs on errors: https://developers.asana.com/docs/errors',
                },
              ],
            });
          return json(200, {
            data: {
              gid: USER.gid,
              resource_type: 'user',
              name: USER.name,
              email: USER.email,
              photo: null,
              workspaces: [{ gid: '1331', resource_type: 'workspace', name: 'My Company Workspace' }],
            },
          });
        },
      },
    ],
    e2e: {
      expectConfig: {},
      api: { method: 'GET', path: '/api/1.0/users/me', answer: { data: { gid: USER.gid, resource_type: 'user' } } },
      refreshes: true,
      failure: 'denied',
    },
  };
}
