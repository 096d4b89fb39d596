/**
 * Linear, as its docs describe it:
 * - https://linear.app/developers/oauth-2-0-authentication (GET https://linear.app/oauth/authorize with
 *   `client_id`, `redirect_uri`, `response_type=code`, `scope` (comma separated; `read` always present), `state`,
 *   optional `prompt=consent` and PKCE; the redirect back: `code` and `state`, or `error=access_denied`; POST
 *   https://api.linear.app/oauth/token, a form with `code`, `redirect_uri`, `client_id`, `client_secret`,
 *   `grant_type`; the answer: `access_token`, `token_type: "Bearer"`, `expires_in`, `scope` as a JSON array, and
 *   `refresh_token` (every app since 1 April 2026); refreshing with `grant_type=refresh_token` rotates it; a bad code:
 *   400 `{"error": "invalid_grant", ...}`)
 * - https://linear.app/developers/graphql (POST https://api.linear.app/graphql with `{"query": ...}`; the workspace:
 *   `organization { id name urlKey }`; a bad token: 400 with `errors[].extensions.code: "AUTHENTICATION_ERROR"`)
 */
import type { ProviderSimulator, SimRequest } from './framework.js';
import { e2eCase, json, oauth2Provider, oauthErrors, opaqueClient, postRoute, tokenAnswer } from './framework.js';

const ORGANIZATION = { id: 'e5a41e42-59d4-4f2c-8a3e-7a7b6d8c9e0f', name: 'Acme', urlKey: 'acme' };
const VIEWER = { id: '2e5f8a9c-1b3d-4e6f-8a0b-1c2d3e4f5a6b', name: 'Ada Lovelace', email: 'ada@acme.example' };

export function linear(): ProviderSimulator {
  const client = opaqueClient(16, 16);

  const unauthenticated = json(400, {
    errors: [
      {
        message: 'Authentication required, not authenticated',
        extensions: {
          type: 'authentication error',
          code: 'AUTHENTICATION_ERROR',
          userPresentableMessage: 'You need to authenticate to access this operation.',
        },
      },
    ],
  });
  /** The GraphQL endpoint: the two queries the test and the post-connection step send. */
  const graphql = (req: SimRequest) => {
    let query = '';
    try {
      query = String((JSON.parse(req.body) as { query?: unknown }).query ?? '');
    } catch {
      return json(400, { errors: [{ message: 'Unexpected token in JSON', extensions: { code: 'GRAPHQL_PARSE_FAILED' } }] });
    }
    const data: Record<string, unknown> = {};
    if (/\borganization\b/.test(query)) data.organization = ORGANIZATION;
    if (/\bviewer\b/.test(query)) data.viewer = VIEWER;
    if (Object.keys(data).length === 0)
      return json(400, { errors: [{ message: 'Unknown query', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] });
    return json(200, { data });
  };

  return oauth2Provider({
    manifest: 'linear',
    docs: ['https://linear.app/developers/oauth-2-0-authentication', 'https://linear.app/developers/graphql'],
    client,
    authorize: {
      url: 'https://linear.app/oauth/authorize',
      provider: 'Linear',
      invalid: (req) =>
        json(400, { error: req.query.get('client_id') !== client.clientId ? 'invalid_client' : 'unsupported_response_type' }),
    },
    token: {
      url: 'https://api.linear.app/oauth/token',
      auth: 'either',
      accessPrefix: 'lin_oauth_',
      refreshPrefix: 'lin_refresh_',
      refresh: { rotate: true },
    },
    answer: tokenAnswer('access_token token_type expires_in scope refresh_token', {
      token_type: 'Bearer',
      expires_in: 86399,
      scope: (i) => (i.scope || 'read').split(','),
    }),
    error: oauthErrors(
      { client: 'Client authentication failed', grant: 'Invalid authorization code', refresh: 'Invalid refresh token' },
      401,
    ),
    api: [postRoute('https://api.linear.app/graphql', unauthenticated, graphql)],
    // Nothing typed: the workspace comes from the GraphQL organization query after the token.
    e2e: e2eCase(
      'POST /graphql',
      { data: { viewer: VIEWER } },
      {
        expectConfig: { organizationId: ORGANIZATION.id },
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ viewer { id name email } }' }),
        refreshes: true,
        failure: 'refused-code',
      },
    ),
  });
}
