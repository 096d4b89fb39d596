/**
 * Twitch, as its docs describe it:
 * - https://dev.twitch.tv/docs/authentication/getting-tokens-oauth/#authorization-code-grant-flow (GET
 *   https://id.twitch.tv/oauth2/authorize with `response_type=code`, `client_id`, `redirect_uri`, `scope`, `state`;
 *   POST https://id.twitch.tv/oauth2/token, form-encoded, with `client_id`, `client_secret`, `code`,
 *   `grant_type=authorization_code`, `redirect_uri`; the answer, as the page's example (quoted by
 *   https://hexdocs.pm/hello_twitch_api/TwitchAPI.AuthClient.html): `access_token`, `expires_in`, `refresh_token`,
 *   `scope` (a JSON array), `token_type: "bearer"`)
 * - https://dev.twitch.tv/docs/authentication/scopes/ (the authorize request's `scope` is space delimited)
 * - https://dev.twitch.tv/docs/authentication/refresh-tokens (the same endpoint with `grant_type=refresh_token`; the
 *   answer carries "the new access token, refresh token, and scopes"; "Because refresh tokens may change, your app
 *   should safely store the new refresh token")
 * - https://dev.twitch.tv/docs/api/reference (GET https://api.twitch.tv/helix/users with `Authorization: Bearer` and
 *   `Client-Id`, the app's client ID, which the calling application adds (the manifest says so): `{"data": [{"id",
 *   "login", "display_name", "type", "broadcaster_type", ...}]}`; 401 when the token is not valid or the Client-Id
 *   does not match it)
 * Silent (in the pages stored here): the redirect of a refused consent (RFC 6749's `error=access_denied` is sent),
 * the token errors' bodies and the 401's body (Twitch's usual `{"error", "status", "message"}` is sent, with the
 * simulator's words), whether a refresh retires the previous refresh token (the simulator retires it).
 */
import { e2eCase, getRoute, json, oauth2Provider, opaqueClient, tokenAnswer, type ProviderSimulator } from './framework.js';

const USER = { id: '141981764', login: 'adalovelace', display_name: 'AdaLovelace', type: '', broadcaster_type: 'partner' };
const unauthorized = (message: string) => json(401, { error: 'Unauthorized', status: 401, message });

export function twitch(): ProviderSimulator {
  const sim = oauth2Provider({
    manifest: 'twitch',
    docs: [
      'https://dev.twitch.tv/docs/authentication/getting-tokens-oauth/',
      'https://dev.twitch.tv/docs/authentication/refresh-tokens',
      'https://dev.twitch.tv/docs/api/reference',
    ],
    client: opaqueClient(15, 15),
    authorize: { url: 'https://id.twitch.tv/oauth2/authorize', provider: 'Twitch' },
    token: {
      url: 'https://id.twitch.tv/oauth2/token',
      auth: 'body',
      // "Because refresh tokens may change, your app should safely store the new refresh token": the old one is retired.
      refresh: { rotate: true },
    },
    answer: tokenAnswer('access_token expires_in refresh_token scope token_type', {
      expires_in: 14_124,
      // The scope asked for, as a JSON array.
      scope: (i) => i.scope.split(/[ ,]+/).filter(Boolean),
      token_type: 'bearer',
    }),
    error: (code, description) => {
      const status = code === 'invalid_client' ? 403 : 400;
      return json(status, { error: status === 403 ? 'Forbidden' : 'Bad Request', status, message: description });
    },
    api: [
      // Get Users answers a request whose Client-Id is the token's client.
      getRoute('https://api.twitch.tv/helix/users', unauthorized('Invalid OAuth token'), (req) =>
        req.headers['client-id'] === sim.client.clientId
          ? json(200, { data: [USER] })
          : unauthorized('Client ID and OAuth token do not match'),
      ),
    ],
    e2e: e2eCase('GET /helix/users', { data: [{ id: USER.id, login: USER.login }] }, { refreshes: true, failure: 'refused-code' }),
  });
  // Helix calls carry the app's Client-Id, which the calling application adds (the manifest says so).
  sim.e2e.api.headers = { 'client-id': sim.client.clientId };
  return sim;
}
