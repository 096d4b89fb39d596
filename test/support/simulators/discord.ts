/**
 * Discord, as its docs describe it:
 * - https://discord.com/developers/docs/topics/oauth2 (authorize at https://discord.com/oauth2/authorize with
 *   `response_type=code`, `client_id`, `scope` (space separated), `state`, `redirect_uri`, `prompt`; the redirect
 *   back: `code` and `state`; the token URL https://discord.com/api/oauth2/token takes only
 *   `application/x-www-form-urlencoded`, with "either HTTP Basic authentication or `client_id` and `client_secret`
 *   supplied in the form data body"; the access token response: `access_token`, `token_type: "Bearer"`,
 *   `expires_in: 604800`, `refresh_token`, `scope`; a refresh answers with the same response, a new refresh token
 *   included)
 * - https://discord.com/developers/docs/resources/user#get-current-user (GET /users/@me on https://discord.com/api:
 *   the user object, `id`, `username`, `discriminator`, `avatar`, ...; `email` with the `email` scope)
 * - https://discord.com/developers/docs/topics/opcodes-and-status-codes (401 UNAUTHORIZED: "The Authorization header
 *   was missing or invalid"; error bodies `{"code", "message"}`, code 0 the general error)
 * The test calls `/users/@me` as the docs write it (the proxy passes a literal "@" past a path's first segment).
 * Silent: whether the old refresh token still works after a refresh (the simulator retires it), the redirect of a
 * refused consent (RFC 6749's `error=access_denied`) and the token endpoint's error bodies (RFC 6749 §5.2's `error`).
 */
import { e2eCase, getRoute, json, oauth2Provider, oauthErrors, opaqueClient, tokenAnswer, type ProviderSimulator } from './framework.js';

const USER = {
  id: '80351110224678912',
  username: 'Nelly',
  discriminator: '1337',
  avatar: '8342729096ea3675442027381ff50dfe',
  verified: true,
  email: 'nelly@discord.com',
};

export function discord(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'discord',
    docs: ['https://discord.com/developers/docs/topics/oauth2', 'https://discord.com/developers/docs/resources/user#get-current-user'],
    client: opaqueClient('157730590492196864', 16),
    authorize: { url: 'https://discord.com/oauth2/authorize', provider: 'Discord' },
    token: { url: 'https://discord.com/api/oauth2/token', auth: 'either', refresh: { rotate: true } },
    answer: tokenAnswer('access_token token_type expires_in refresh_token scope', { token_type: 'Bearer', expires_in: 604800 }),
    error: oauthErrors({}, 401),
    api: [getRoute('https://discord.com/api/v10/users/@me', json(401, { message: '401: Unauthorized', code: 0 }), json(200, USER))],
    e2e: e2eCase('GET /api/v10/users/@me', { id: USER.id, username: 'Nelly' }, { refreshes: true, failure: 'denied' }),
  });
}
