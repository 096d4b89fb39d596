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
  type SimRequest,
} from './framework.js';

const WORKSPACE_ID = '3c90c3cc-0d44-4b50-8888-8dd25736052a';
const BOT_ID = 'b3414d65-1224-4e8a-8c2d-cc9d8773d601';
const USER_ID = '5389a034-eb5c-47b5-8a9e-f79c99ef166c';

/** The token request's parameters: the docs send JSON; an RFC 6749 form is read the same way. */
function tokenParams(req: SimRequest): URLSearchParams {
  if (String(req.headers['content-type'] ?? '').includes('application/json')) {
    const body = JSON.parse(req.body || '{}') as Record<string, unknown>;
    return new URLSearchParams(Object.entries(body).map(([k, v]) => [k, String(v)]));
  }
  return req.form;
}

const notionError = (status: number, code: string, message: string) =>
  json(status, { object: 'error', status, code, message, request_id: opaque('', 16) });

export function notion(): ProviderSimulator {
  const state = newState();
  const grants = new Grants(state);
  const client = { clientId: '1a2b3c4d-5e6f-4a0b-9c1d-2e3f4a5b6c7d', clientSecret: opaque('secret_', 20) };

  const tokenAnswer = (grant: PendingCode) => {
    const { accessToken, refreshToken } = grants.issueTokens(grant, { accessPrefix: 'ntn_', refreshPrefix: 'nrt_', refresh: true });
    return json(200, {
      access_token: accessToken,
      token_type: 'bearer',
      refresh_token: refreshToken,
      bot_id: BOT_ID,
      workspace_name: "Ada's Notion Workspace",
      workspace_icon: 'https://www.notion.so/images/workspace-icon.png',
      workspace_id: WORKSPACE_ID,
      owner: {
        type: 'user',
        user: { object: 'user', id: USER_ID, name: 'Ada Lovelace', avatar_url: null, type: 'person', person: { email: 'ada@example.com' } },
      },
      duplicated_template_id: null,
      request_id: opaque('', 16),
    });
  };

  return {
    manifest: 'notion',
    hosts: ['api.notion.com'],
    docs: [
      'https://developers.notion.com/docs/authorization',
      'https://developers.notion.com/reference/create-a-token',
      'https://developers.notion.com/reference/refresh-a-token',
      'https://developers.notion.com/reference/status-codes',
      'https://developers.notion.com/reference/get-self',
    ],
    client,
    state,
    routes: [
      {
        method: 'GET',
        host: 'api.notion.com',
        path: '/v1/oauth/authorize',
        handler: (req) => {
          if (req.query.get('client_id') !== client.clientId) return notionError(400, 'invalid_request', 'Invalid client_id.');
          if (req.query.get('response_type') !== 'code') return notionError(400, 'invalid_request', 'response_type must be code.');
          const redirectUri = req.query.get('redirect_uri')!;
          const st = req.query.get('state') ?? '';
          const code = grants.issueCode(pendingFrom(req));
          return consentPage(
            'Notion',
            redirect(redirectUri, { code, state: st }).headers!.location!,
            redirect(redirectUri, { error: 'access_denied', state: st }).headers!.location!,
          );
        },
      },
      {
        method: 'POST',
        host: 'api.notion.com',
        path: '/v1/oauth/token',
        handler: (req) => {
          // create-a-token: the client authenticates with HTTP Basic only.
          const c = clientOf(req);
          if (c.via !== 'basic' || c.clientId !== client.clientId || c.clientSecret !== client.clientSecret)
            return json(401, { error: 'invalid_client', error_description: 'Client authentication failed.' });
          const params = tokenParams(req);
          if (params.get('grant_type') === 'refresh_token') {
            const grant = grants.takeRefresh(params.get('refresh_token'), true);
            return grant ? tokenAnswer(grant) : json(400, { error: 'invalid_grant', error_description: 'Invalid refresh token.' });
          }
          if (params.get('grant_type') !== 'authorization_code')
            return json(400, { error: 'unsupported_grant_type', error_description: 'Unsupported grant type.' });
          const grant = grants.takeCode(params.get('code'));
          if (!grant) return json(400, { error: 'invalid_grant', error_description: 'Invalid code.' });
          if (params.get('redirect_uri') !== null && params.get('redirect_uri') !== grant.redirectUri)
            return json(400, { error: 'invalid_grant', error_description: 'Invalid redirect_uri.' });
          return tokenAnswer(grant);
        },
      },
      {
        method: 'GET',
        host: 'api.notion.com',
        path: '/v1/users/me',
        handler: (req) => {
          if (!grants.validAccess(bearerOf(req))) return notionError(401, 'unauthorized', 'API token is invalid.');
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
                user: {
                  object: 'user',
                  id: USER_ID,
                  name: 'Ada Lovelace',
                  avatar_url: null,
                  type: 'person',
                  person: { email: 'ada@example.com' },
                },
              },
              workspace_name: "Ada's Notion Workspace",
            },
            request_id: opaque('', 16),
          });
        },
      },
    ],
    e2e: {
      // Nothing typed: the workspace comes back in the token answer.
      expectConfig: { workspaceId: WORKSPACE_ID },
      api: { method: 'GET', path: '/v1/users/me', answer: { object: 'user', id: BOT_ID, type: 'bot' } },
      refreshes: true,
      failure: 'denied',
    },
  };
}
