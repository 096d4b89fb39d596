/**
 * Zoom (user-managed OAuth app), as its docs describe it:
 * - https://developers.zoom.us/docs/integrations/oauth/ (GET https://zoom.us/oauth/authorize; the redirect back:
 *   `code` and `state`; POST https://zoom.us/oauth/token with HTTP Basic and a form; the answer: `access_token`,
 *   `token_type: "bearer"`, `refresh_token`, `expires_in: 3599`, `scope`, `api_url`; a refresh rotates the refresh
 *   token; errors `{"reason": ..., "error": ...}`, a bad code `{"reason": "Invalid authorization code", "error": "invalid_grant"}`)
 * - https://developers.zoom.us/docs/api/users/#tag/users/GET/users/{userId} (GET /v2/users/me: `id`, `email`,
 *   `account_id`, ...; a bad token: 401 `{"code": 124, "message": "Invalid access token."}`)
 */
import { authServer, authorizePage, clientOf, json, opaque, withToken, type PendingCode, type ProviderSimulator } from './framework.js';

const ACCOUNT_ID = 'Wk9PTV9BQ0NPVU5UX0lE';
const EMAIL = 'jchill@example.com';

export function zoom(): ProviderSimulator {
  const { state, grants } = authServer();
  const client = { clientId: 'xB8Uq0nSR2m6aSgYgE5Dnw', clientSecret: opaque('', 16) };
  const zoomError = (status: number, error: string, reason: string) => json(status, { reason, error });

  const tokenAnswer = (grant: PendingCode) => {
    const { accessToken, refreshToken } = grants.issueTokens(grant, { accessPrefix: 'eyJzdiI6', refreshPrefix: 'eyJzdiI6', refresh: true });
    return json(200, {
      access_token: accessToken,
      token_type: 'bearer',
      refresh_token: refreshToken,
      expires_in: 3599,
      scope: grant.scope || 'user:read:user',
      api_url: 'https://api.zoom.us',
    });
  };

  return {
    manifest: 'zoom',
    hosts: ['zoom.us', 'api.zoom.us'],
    docs: [
      'https://developers.zoom.us/docs/integrations/oauth/',
      'https://developers.zoom.us/docs/api/users/#tag/users/GET/users/{userId}',
    ],
    client,
    state,
    routes: [
      {
        method: 'GET',
        host: 'zoom.us',
        path: '/oauth/authorize',
        handler: authorizePage('Zoom', grants, client, { invalid: () => zoomError(400, 'invalid_client', 'Invalid client_id') }),
      },
      {
        method: 'POST',
        host: 'zoom.us',
        path: '/oauth/token',
        handler: (req) => {
          // The Basic header carries the client; parameters in the form (or the query, which the docs also allow).
          const c = clientOf(req);
          if (c.via !== 'basic') return zoomError(400, 'invalid_request', 'Client ID or client secret is missing.');
          if (c.clientId !== client.clientId || c.clientSecret !== client.clientSecret)
            return zoomError(401, 'invalid_client', 'Invalid client_id or client_secret');
          const p = (k: string) => req.form.get(k) ?? req.query.get(k);
          if (p('grant_type') === 'refresh_token') {
            const grant = grants.takeRefresh(p('refresh_token'), true);
            return grant ? tokenAnswer(grant) : zoomError(400, 'invalid_grant', 'Invalid Token!');
          }
          if (p('grant_type') !== 'authorization_code') return zoomError(400, 'unsupported_grant_type', 'Unsupported grant type');
          const grant = grants.takeCode(p('code'));
          if (!grant) return zoomError(400, 'invalid_grant', 'Invalid authorization code');
          if (p('redirect_uri') !== grant.redirectUri) return zoomError(400, 'invalid_request', 'Redirect URI mismatch.');
          return tokenAnswer(grant);
        },
      },
      {
        method: 'GET',
        host: 'api.zoom.us',
        path: '/v2/users/me',
        handler: withToken(grants, json(401, { code: 124, message: 'Invalid access token.' }), () =>
          json(200, {
            id: 'KDcuGIm1QgePTO8WbOqwIQ',
            first_name: 'Jill',
            last_name: 'Chill',
            display_name: 'Jill Chill',
            email: EMAIL,
            type: 1,
            role_name: 'Owner',
            pmi: 3542471135,
            timezone: 'Asia/Shanghai',
            verified: 1,
            dept: '',
            created_at: '2019-06-01T07:58:03Z',
            account_id: ACCOUNT_ID,
            account_number: 10009239,
            language: 'en-US',
            status: 'active',
            role_id: '0',
            user_created_at: '2019-06-01T07:58:03Z',
          }),
        ),
      },
    ],
    e2e: {
      // Nothing typed: the account and the e-mail come from GET /users/me after the token.
      expectConfig: { accountId: ACCOUNT_ID, email: EMAIL },
      api: { method: 'GET', path: '/users/me', answer: { email: EMAIL, account_id: ACCOUNT_ID } },
      refreshes: true,
      failure: 'refused-code',
    },
  };
}
