/**
 * Slack, as its docs describe it:
 * - https://docs.slack.dev/authentication/installing-with-oauth (authorize URL, the redirect back: `code`
 *   and `state`, or `error=access_denied` and `state` when the user cancels)
 * - https://docs.slack.dev/reference/methods/oauth.v2.access (the token answer: HTTP 200, `ok`, `token_type:
 *   "bot"`, `team`, `bot_user_id`, `authed_user`; errors as HTTP 200 `{"ok": false, "error": "invalid_code"}`;
 *   client credentials by HTTP Basic or in the form)
 * - https://docs.slack.dev/authentication/using-token-rotation (with rotation on: `expires_in: 43200`, an
 *   `xoxe-1-` refresh token, exchanged at oauth.v2.access with `grant_type=refresh_token`; the old refresh
 *   token stops working)
 * - https://docs.slack.dev/reference/methods/conversations.list (the API call: Bearer token, `channels`,
 *   `response_metadata.next_cursor`; `{"ok": false, "error": "invalid_auth"}` for a bad token)
 */
import type { PendingCode, ProviderSimulator, SimRequest } from './framework.js';
import { authServer, authorizePage, bearerOf, clientOf, json, opaque } from './framework.js';

// Slack's Web API answers `application/json; charset=utf-8` (oauth.v2.access and every method).
const slackJson = (body: unknown) => json(200, body, 'application/json; charset=utf-8');
const TEAM = { id: 'T9TK3CUKW', name: 'Slack Softball Team' };
const BOT_USER_ID = 'U0KRQLJ9H';
const APP_ID = 'A0KRD7HC3';

export function slack(): ProviderSimulator {
  const { state, grants } = authServer();
  const client = { clientId: '2141029472.691202649728', clientSecret: opaque('', 16) };

  const clientOk = (req: SimRequest) => {
    const c = clientOf(req);
    return c.clientId === client.clientId && c.clientSecret === client.clientSecret;
  };

  /** oauth.v2.access's success answer (rotation on: expires_in and refresh_token). */
  const tokenAnswer = (grant: PendingCode) => {
    const { accessToken, refreshToken } = grants.issueTokens(grant, {
      accessPrefix: 'xoxe.xoxb-1-',
      refreshPrefix: 'xoxe-1-',
      refresh: true,
    });
    return slackJson({
      ok: true,
      access_token: accessToken,
      token_type: 'bot',
      scope: grant.scope,
      bot_user_id: BOT_USER_ID,
      app_id: APP_ID,
      team: TEAM,
      enterprise: null,
      is_enterprise_install: false,
      authed_user: { id: 'U1234' },
      expires_in: 43200,
      refresh_token: refreshToken,
    });
  };

  return {
    manifest: 'slack',
    hosts: ['slack.com'],
    docs: [
      'https://docs.slack.dev/authentication/installing-with-oauth',
      'https://docs.slack.dev/reference/methods/oauth.v2.access',
      'https://docs.slack.dev/authentication/using-token-rotation',
      'https://docs.slack.dev/reference/methods/conversations.list',
    ],
    client,
    state,
    routes: [
      {
        // installing-with-oauth: the user approves (code, state) or cancels (error=access_denied, state).
        method: 'GET',
        host: 'slack.com',
        path: '/oauth/v2/authorize',
        handler: authorizePage('Slack', grants, client, { invalid: () => ({ status: 400, body: 'invalid client_id' }) }),
      },
      {
        // oauth.v2.access: authorization_code (the default grant) and refresh_token (rotation).
        method: 'POST',
        host: 'slack.com',
        path: '/api/oauth.v2.access',
        handler: (req) => {
          if (!clientOf(req).clientId) return slackJson({ ok: false, error: 'invalid_client_id' });
          if (!clientOk(req)) return slackJson({ ok: false, error: 'bad_client_secret' });
          const grantType = req.form.get('grant_type') ?? 'authorization_code';
          if (grantType === 'refresh_token') {
            const grant = grants.takeRefresh(req.form.get('refresh_token'), true);
            return grant ? tokenAnswer(grant) : slackJson({ ok: false, error: 'invalid_refresh_token' });
          }
          if (grantType !== 'authorization_code') return slackJson({ ok: false, error: 'invalid_grant_type' });
          const grant = grants.takeCode(req.form.get('code'));
          if (!grant) return slackJson({ ok: false, error: 'invalid_code' });
          if (req.form.get('redirect_uri') !== null && req.form.get('redirect_uri') !== grant.redirectUri)
            return slackJson({ ok: false, error: 'bad_redirect_uri' });
          return tokenAnswer(grant);
        },
      },
      {
        // conversations.list: GET with the token in the Authorization header.
        method: 'GET',
        host: 'slack.com',
        path: '/api/conversations.list',
        handler: (req) => {
          const token = bearerOf(req);
          if (!token) return slackJson({ ok: false, error: 'not_authed' });
          if (!grants.validAccess(token)) return slackJson({ ok: false, error: 'invalid_auth' });
          return slackJson({
            ok: true,
            channels: [
              {
                id: 'C012AB3CD',
                name: 'general',
                is_channel: true,
                is_group: false,
                is_im: false,
                created: 1449252889,
                creator: 'U012A3CDE',
                is_archived: false,
                is_general: true,
                is_member: true,
                is_private: false,
                num_members: 4,
              },
            ],
            response_metadata: { next_cursor: 'dGVhbTpDMDYxRkE1UEI=' },
          });
        },
      },
    ],
    e2e: {
      // Nothing typed: the workspace and the bot user come back in the token answer.
      expectConfig: { teamId: TEAM.id, botUserId: BOT_USER_ID },
      api: { method: 'GET', path: '/conversations.list?limit=20', answer: { ok: true, channels: [{ id: 'C012AB3CD', name: 'general' }] } },
      refreshes: true,
      failure: 'refused-code',
    },
  };
}
