/**
 * GitHub (an OAuth App), as its docs describe it:
 * - https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps (authorize at
 *   github.com/login/oauth/authorize; the redirect back with `code` and `state`; the token answer at
 *   github.com/login/oauth/access_token: `access_token`, `scope`, `token_type: "bearer"`, form-encoded by
 *   default, JSON with `Accept: application/json`, XML with `Accept: application/xml`; OAuth App tokens do not
 *   expire and there is no refresh)
 * - https://docs.github.com/en/apps/oauth-apps/maintaining-oauth-apps/troubleshooting-authorization-request-errors
 *   (a denied request: `error=access_denied`, `error_description`, `error_uri` and `state` on the redirect)
 * - https://docs.github.com/en/apps/oauth-apps/maintaining-oauth-apps/troubleshooting-oauth-app-access-token-request-errors
 *   (token errors answered with HTTP 200: `{"error": "bad_verification_code", "error_description", "error_uri"}`)
 * - https://docs.github.com/en/rest/users/users#get-the-authenticated-user (the API call: `GET /user`;
 *   401 `{"message": "Bad credentials", "documentation_url", "status": "401"}`)
 * - https://docs.github.com/en/rest/using-the-rest-api/getting-started-with-the-rest-api#user-agent (requests
 *   without a User-Agent are refused)
 * - https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/scopes-for-oauth-apps (`X-OAuth-Scopes`: the
 *   scopes the token has, `X-Accepted-OAuth-Scopes`: the scopes the action checks for)
 * - https://docs.github.com/en/rest/repos/repos#create-a-repository-for-the-authenticated-user (`POST /user/repos`
 *   needs the `public_repo` or `repo` scope; 403 Forbidden)
 */
import { authorizePage, authServer, bearerOf, clientOf, json, opaque, route, type ProviderSimulator, type SimAnswer } from './framework.js';

const USER = { login: 'octocat', id: 1, node_id: 'MDQ6VXNlcjE=', type: 'User', site_admin: false, name: 'monalisa octocat' };

/** The token endpoint's answer in the encoding the Accept header asks for (form-encoded by default). */
function negotiated(accept: string | undefined, fields: Record<string, string>): SimAnswer {
  if (accept?.includes('application/json')) return json(200, fields, 'application/json; charset=utf-8');
  if (accept?.includes('application/xml')) {
    const xml = Object.entries(fields)
      .map(([k, v]) => `<${k}>${v.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</${k}>`)
      .join('');
    return { status: 200, headers: { 'content-type': 'application/xml; charset=utf-8' }, body: `<OAuth>${xml}</OAuth>` };
  }
  return {
    status: 200,
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
    body: new URLSearchParams(fields).toString(),
  };
}

export function github(): ProviderSimulator {
  const { state, grants } = authServer();
  // The scopes each issued token has (comma-separated, as the token answer and X-OAuth-Scopes give them).
  const tokenScopes = new Map<string, string>();
  const client = { clientId: `Ov23li${opaque('', 7)}`, clientSecret: opaque('', 20) };
  const tokenError = (accept: string | undefined, error: string, description: string, anchor: string) =>
    negotiated(accept, {
      error,
      error_description: description,
      error_uri: `https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#${anchor}`,
    });
  return {
    manifest: 'github',
    hosts: ['github.com', 'api.github.com'],
    docs: ['https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps'],
    client,
    state,
    routes: [
      route('GET https://github.com/login/oauth/authorize', (req) =>
        // GitHub does not require response_type; Latchkey sends it anyway.
        authorizePage('GitHub', grants, client, {
          denied: {
            error: 'access_denied',
            error_description: 'The user has denied your application access.',
            error_uri: 'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#access-denied',
          },
        })(req),
      ),
      route('POST https://github.com/login/oauth/access_token', (req) => {
        const accept = req.headers.accept;
        const c = clientOf(req);
        if (c.clientId !== client.clientId || c.clientSecret !== client.clientSecret)
          return tokenError(
            accept,
            'incorrect_client_credentials',
            'The client_id and/or client_secret passed are incorrect.',
            'incorrect-client-credentials',
          );
        const grant = grants.takeCode(req.form.get('code'));
        if (!grant) return tokenError(accept, 'bad_verification_code', 'The code passed is incorrect or expired.', 'bad-verification-code');
        if (req.form.get('redirect_uri') !== null && req.form.get('redirect_uri') !== grant.redirectUri)
          return tokenError(
            accept,
            'redirect_uri_mismatch',
            'The redirect_uri MUST match the registered callback URL for this application.',
            'redirect-uri-mismatch',
          );
        const { accessToken } = grants.issueTokens(grant, { accessPrefix: 'gho_' });
        tokenScopes.set(accessToken, grant.scope.split(' ').filter(Boolean).join(', '));
        return negotiated(accept, { access_token: accessToken, scope: grant.scope.split(' ').join(','), token_type: 'bearer' });
      }),
      route('GET https://api.github.com/user', (req) => {
        if (!req.headers['user-agent'])
          return {
            status: 403,
            headers: { 'content-type': 'text/plain; charset=utf-8' },
            body: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required). Check https://developer.github.com for other possible causes.\n',
          };
        const auth = req.headers.authorization ?? '';
        // Both `Authorization: Bearer` and the older `Authorization: token` are documented.
        const token = bearerOf(req) ?? (auth.startsWith('token ') ? auth.slice(6) : undefined);
        if (!grants.validAccess(token))
          return json(
            401,
            { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' },
            'application/json; charset=utf-8',
          );
        return json(200, USER, 'application/json; charset=utf-8');
      }),
      route('POST https://api.github.com/user/repos', (req) => {
        const token = bearerOf(req);
        if (!grants.validAccess(token))
          return json(401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' });
        const has = tokenScopes.get(token!) ?? '';
        const scopeHeaders = { 'x-oauth-scopes': has, 'x-accepted-oauth-scopes': 'public_repo, repo' };
        if (!has.split(', ').some((s) => s === 'repo' || s === 'public_repo'))
          return {
            status: 403,
            headers: { 'content-type': 'application/json; charset=utf-8', ...scopeHeaders },
            body: JSON.stringify({
              message: 'Forbidden',
              documentation_url: 'https://docs.github.com/rest/repos/repos#create-a-repository-for-the-authenticated-user',
              status: '403',
            }),
          };
        const { name } = JSON.parse(req.body || '{}') as { name?: string };
        return {
          ...json(201, { id: 1296269, name, full_name: `octocat/${name}`, private: false }, 'application/json; charset=utf-8'),
          headers: { 'content-type': 'application/json; charset=utf-8', ...scopeHeaders },
        };
      }),
    ],
    e2e: {
      expectConfig: {},
      api: { method: 'GET', path: '/user', headers: { 'user-agent': 'latchkey-e2e' }, answer: { login: 'octocat', id: 1 } },
      refreshes: false,
      failure: 'refused-code',
    },
  };
}
