/**
 * Notion, as its docs describe it:
 * - https://developers.notion.com/docs/authorization (the authorize URL with `owner=user`; the redirect back:
 *   `code` and `state`, or `error=access_denied` and `state` when the user cancels)
 * - https://developers.notion.com/reference/create-a-token (POST /v1/oauth/token, HTTP Basic; the answer:
 *   `access_token`, `token_type: "bearer"`, `refresh_token`, `bot_id`, `workspace_id`, `workspace_name`,
 *   `workspace_icon`, `owner`, `duplicated_template_id`, `request_id`; no `expires_in`)
 * - https://developers.notion.com/reference/refresh-a-token (`grant_type=refresh_token`: the same answer)
 * - https://developers.notion.com/reference/status-codes (errors: `{"object": "error", "status", "code", "message"}`;
 *   the token endpoint's refused grant: 400 `invalid_grant`; a missing Notion-Version: 400 `missing_version`)
 * - https://developers.notion.com/reference/get-self (GET /v1/users/me: the bot user)
 */
import type { ProviderSimulator } from './framework.js';
import { e2eCase, getRoute, json, oauth2Provider, oauthErrors, opaque, opaqueClient, tokenAnswer } from './framework.js';

const WORKSPACE_ID = '3c90c3cc-0d44-4b50-8888-8dd25736052a';
const BOT_ID = 'b3414d65-1224-4e8a-8c2d-cc9d8773d601';
const USER_ID = '5389a034-eb5c-47b5-8a9e-f79c99ef166c';
/** The user who installed the integration: the token answer's and the bot user's `owner.user`. */
const OWNER = { object: 'user', id: USER_ID, name: 'Ada Lovelace', avatar_url: null, type: 'person', person: { email: 'ada@example.com' } };

const notionError = (status: number, code: string, message: string) =>
  json(status, { object: 'error', status, code, message, request_id: opaque('', 16) });

export function notion(): ProviderSimulator {
  const client = opaqueClient('1a2b3c4d-5e6f-4a0b-9c1d-2e3f4a5b6c7d', opaque('secret_', 20));

  return oauth2Provider({
    manifest: 'notion',
    docs: [
      'https://developers.notion.com/docs/authorization',
      'https://developers.notion.com/reference/create-a-token',
      'https://developers.notion.com/reference/refresh-a-token',
      'https://developers.notion.com/reference/status-codes',
      'https://developers.notion.com/reference/get-self',
    ],
    client,
    authorize: {
      url: 'https://api.notion.com/v1/oauth/authorize',
      provider: 'Notion',
      invalid: (req) =>
        req.query.get('client_id') !== client.clientId
          ? notionError(400, 'invalid_request', 'Invalid client_id.')
          : notionError(400, 'invalid_request', 'response_type must be code.'),
    },
    token: {
      url: 'https://api.notion.com/v1/oauth/token',
      // create-a-token: the client authenticates with HTTP Basic only; the docs send JSON, as the manifest does (a form is read the same way).
      auth: 'basic',
      acceptsJson: true,
      accessPrefix: 'ntn_',
      refreshPrefix: 'nrt_',
      refresh: { rotate: true },
    },
    answer: tokenAnswer(
      'access_token token_type refresh_token bot_id workspace_name workspace_icon workspace_id owner duplicated_template_id request_id',
      {
        token_type: 'bearer',
        bot_id: BOT_ID,
        workspace_name: "Ada's Notion Workspace",
        workspace_icon: 'https://www.notion.so/images/workspace-icon.png',
        workspace_id: WORKSPACE_ID,
        owner: { type: 'user', user: OWNER },
        duplicated_template_id: null,
        request_id: () => opaque('', 16),
      },
    ),
    error: oauthErrors(
      {
        client: 'Client authentication failed.',
        grant: 'Invalid code.',
        redirect: 'Invalid redirect_uri.',
        refresh: 'Invalid refresh token.',
        grant_type: 'Unsupported grant type.',
      },
      401,
    ),
    api: [
      getRoute(
        'https://api.notion.com/v1/users/me',
        () => notionError(401, 'unauthorized', 'API token is invalid.'),
        (req) => {
          if (!req.headers['notion-version'])
            return notionError(400, 'missing_version', 'Notion-Version header failed validation: Notion-Version header should be defined.');
          return json(200, {
            object: 'user',
            id: BOT_ID,
            name: 'Latchkey test integration',
            avatar_url: null,
            type: 'bot',
            bot: {
              owner: {
                type: 'user',
                user: OWNER,
              },
              workspace_name: "Ada's Notion Workspace",
            },
            request_id: opaque('', 16),
          });
        },
      ),
    ],
    // Nothing typed: the workspace comes back in the token answer.
    e2e: e2eCase(
      'GET /v1/users/me',
      { object: 'user', id: BOT_ID, type: 'bot' },
      {
        expectConfig: { workspaceId: WORKSPACE_ID },
        refreshes: true,
        failure: 'denied',
      },
    ),
  });
}
