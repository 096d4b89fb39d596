/**
 * Intercom (US workspaces), as its docs describe it:
 * - https://developers.intercom.com/docs/build-an-integration/learn-more/authentication/setting-up-oauth (GET
 *   https://app.intercom.com/oauth with `client_id`, `state`, `redirect_uri`; the redirect back: `code` and `state`;
 *   POST https://api.intercom.io/auth/eagle/token with `code`, `client_id`, `client_secret`; the answer:
 *   `{"token_type": "Bearer", "token": ..., "access_token": ...}`, the same token twice, no expiry, no refresh token)
 * - https://developers.intercom.com/docs/references/rest-api/errors/error-objects (errors: `{"type": "error.list",
 *   "request_id", "errors": [{"code", "message"}]}`; a bad token: 401 `unauthorized`)
 * - https://developers.intercom.com/docs/references/rest-api/api.intercom.io/admins/identifyadmin (GET /me: the
 *   admin, and `app` with `id_code`, the workspace ID webhooks name in `app_id`)
 */
import { e2eCase, getRoute, json, oauth2Provider, opaque, tokenAnswer, type ProviderSimulator } from './framework.js';

const APP_ID = 'ecahpwf5';

const errorList = (status: number, code: string, message: string) =>
  json(status, { type: 'error.list', request_id: opaque('', 10), errors: [{ code, message }] });

export function intercom(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'intercom',
    docs: [
      'https://developers.intercom.com/docs/build-an-integration/learn-more/authentication/setting-up-oauth',
      'https://developers.intercom.com/docs/references/rest-api/errors/error-objects',
      'https://developers.intercom.com/docs/references/rest-api/api.intercom.io/admins/identifyadmin',
    ],
    client: { clientId: '8f3a9c2e-6b1d-4e7a-9f0c-2d5b8e1a7c4f', clientSecret: '3d2f8a7e-1c9b-4f6e-a2d4-7b8c9e0f1a2b' },
    authorize: {
      url: 'https://app.intercom.com/oauth',
      provider: 'Intercom',
      invalid: () => errorList(400, 'parameter_invalid', 'Invalid client_id'),
    },
    token: { url: 'https://api.intercom.io/auth/eagle/token', auth: 'either', accessPrefix: 'dG9rOjk', refresh: false },
    answer: tokenAnswer('token_type token access_token', { token_type: 'Bearer', token: (i) => i.access }),
    error: (_code, _description, why) =>
      why === 'client' ? errorList(401, 'unauthorized', 'Access Token Invalid') : errorList(400, 'parameter_invalid', 'Invalid code'),
    api: [
      getRoute(
        'https://api.intercom.io/me',
        () => errorList(401, 'unauthorized', 'Access Token Invalid'),
        json(200, {
          type: 'admin',
          id: '991267464',
          email: 'admin@example.com',
          name: 'Ciaran Lee',
          email_verified: true,
          app: {
            type: 'app',
            id_code: APP_ID,
            name: 'Acme Support',
            created_at: 1719492696,
            secure: false,
            identity_verification: false,
            timezone: 'America/Los_Angeles',
            region: 'US',
          },
          avatar: { type: 'avatar', image_url: 'https://static.intercomassets.com/assets/default-avatars/admins/128.png' },
          has_inbox_seat: true,
        }),
      ),
    ],
    // Nothing typed: the workspace (app.id_code) comes from GET /me after the token.
    e2e: e2eCase(
      'GET /me',
      { type: 'admin', app: { id_code: APP_ID } },
      { expectConfig: { appId: APP_ID }, refreshes: false, failure: 'refused-code' },
    ),
  });
}
