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
  authServer,
  authorizePage,
  json,
  oauthError,
  opaque,
  redirect,
  refreshField,
  tokenEndpoint,
  withToken,
  type ProviderSimulator,
} from './framework.js';

const USER = { id: 4673218951, gid: '4673218951', name: 'Greg Sanchez', email: 'gsanchez@example.com' };

export function asana(): ProviderSimulator {
  const { state, grants } = authServer();
  const client = { clientId: '1201234567890123', clientSecret: opaque('', 16) };

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
        handler: authorizePage('Asana', grants, client, {
          invalid: (req) => redirect(req.query.get('redirect_uri')!, { error: 'invalid_client', state: req.query.get('state') ?? '' }),
        }),
      },
      {
        method: 'POST',
        host: 'app.asana.com',
        path: '/-/oauth_token',
        handler: tokenEndpoint({
          grants,
          client,
          auth: 'either',
          accessPrefix: '2/1201234567890123/',
          refreshPrefix: '2/1201234567890123/',
          // A refresh answers the same without `refresh_token`: the old one stays valid.
          refresh: { rotate: false },
          answer: (t) => json(200, { access_token: t.accessToken, expires_in: 3600, token_type: 'bearer', data: USER, ...refreshField(t) }),
          error: oauthError({
            status: { invalid_client: 401 },
            descriptions: {
              client: 'The client_id or client_secret is invalid.',
              code: 'The `code` is invalid or has expired.',
              redirect: 'The `code` is invalid or has expired.',
              pkce: 'The `code` is invalid or has expired.',
              refresh: 'The refresh token is invalid.',
            },
          }),
        }),
      },
      {
        method: 'GET',
        host: 'app.asana.com',
        path: '/api/1.0/users/me',
        handler: withToken(
          grants,
          json(401, {
            errors: [
              {
                message: 'Not Authorized',
                help: 'For more information on API status codes and how to handle them, read the docs on errors: https://developers.asana.com/docs/errors',
              },
            ],
          }),
          () =>
            json(200, {
              data: {
                gid: USER.gid,
                resource_type: 'user',
                name: USER.name,
                email: USER.email,
                photo: null,
                workspaces: [{ gid: '1331', resource_type: 'workspace', name: 'My Company Workspace' }],
              },
            }),
        ),
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
