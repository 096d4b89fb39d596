/**
 * Figma, as its docs describe it:
 * - https://developers.figma.com/docs/rest-api/authentication/ (read in its copy of June 2025 of
 *   https://www.figma.com/developers/api#authentication: GET https://www.figma.com/oauth with `client_id`,
 *   `redirect_uri`, `scope` (space or comma separated), `state`, `response_type=code`, optional `code_challenge`
 *   (S256 only); the redirect back: `code` and `state`, and "If the user rejects the request, no callback is
 *   triggered"; POST https://api.figma.com/v1/oauth/token, form-encoded, the client in HTTP Basic, `redirect_uri`,
 *   `code`, `grant_type=authorization_code`, `code_verifier` with PKCE; the answer: `user_id_string`,
 *   `access_token`, `token_type: "bearer"`, `expires_in`, `refresh_token` (maybe a deprecated numeric `user_id`);
 *   tokens expire after 90 days by default; a refresh: the same client authentication, `refresh_token` and
 *   `grant_type=refresh_token`, answered with `access_token`, `token_type: "bearer"`, `expires_in` and no refresh
 *   token: "A refresh token can be reused as many times as necessary")
 * - https://github.com/figma/rest-api-spec (openapi/openapi.yaml, Figma's OpenAPI description: the OAuth2 scheme's
 *   `tokenUrl` https://api.figma.com/v1/oauth/token and `refreshUrl` https://api.figma.com/v1/oauth/refresh, where
 *   the manifest refreshes, since January 2025 in place of www.figma.com/api/oauth/...; GET /v1/me: `id`, `handle`,
 *   `img_url`, `email`, and 403 `{"status": 403, "err"}` (ErrorResponsePayloadWithErrMessage), no 401 documented;
 *   the OAuth endpoints' errors are not in it: the simulator answers them in the REST API's other error shape,
 *   `{"error": true, "status", "message"}` (ErrorResponsePayloadWithErrorBoolean), as Figma's forum shows the
 *   token endpoint answering, https://forum.figma.com/ask-the-community-7/unsure-how-to-fill-out-the-body-of-the-post-in-oauth2-0-33052)
 * Silent: the request shape of /v1/oauth/refresh (the simulator takes the page's refresh request there, as at
 * /v1/oauth/token), the words of each error (the simulator's are short phrases) and the 403's `err`.
 * A refused consent has no callback, so the end-to-end test's documented error is a refused code.
 */
import {
  e2eCase,
  getRoute,
  json,
  oauth2Provider,
  opaqueClient,
  route,
  tokenAnswer,
  tokenEndpoint,
  type ProviderSimulator,
  type TokenEndpointOptions,
} from './framework.js';

const USER = {
  id: '1234567890123456789',
  handle: 'Ada Lovelace',
  img_url: 'https://s3-alpha.figma.com/profile/ada',
  email: 'ada@example.com',
};

export function figma(): ProviderSimulator {
  const client = opaqueClient(11, 16);
  const token: Omit<TokenEndpointOptions, 'grants' | 'client'> = {
    auth: 'basic',
    refresh: { rotate: false },
    // `user_id_string` in the code grant's answer only: the page's refresh answer has none.
    answer: tokenAnswer('user_id_string access_token token_type expires_in refresh_token', {
      user_id_string: (i) => (i.kind === 'authorization_code' ? USER.id : undefined),
      token_type: 'bearer',
      expires_in: 7_776_000,
    }),
    error: (_code, description) => json(400, { error: true, status: 400, message: description }),
  };
  const { answer, error, ...endpoint } = token;

  return oauth2Provider({
    manifest: 'figma',
    docs: ['https://developers.figma.com/docs/rest-api/authentication/', 'https://github.com/figma/rest-api-spec'],
    client,
    authorize: { url: 'https://www.figma.com/oauth', provider: 'Figma' },
    token: { url: 'https://api.figma.com/v1/oauth/token', ...endpoint },
    answer,
    error,
    api: [
      (grants) => route('POST https://api.figma.com/v1/oauth/refresh', tokenEndpoint({ ...token, grants, client })),
      getRoute('https://api.figma.com/v1/me', json(403, { status: 403, err: 'Invalid token' }), json(200, USER)),
    ],
    e2e: e2eCase('GET /v1/me', { id: USER.id, handle: USER.handle }, { refreshes: true, failure: 'refused-code' }),
  });
}
