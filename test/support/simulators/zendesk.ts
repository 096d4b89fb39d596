/**
 * Zendesk Support, as its docs describe it:
 * - https://developer.zendesk.com/documentation/ticketing/working-with-oauth/creating-and-using-oauth-tokens-with-the-api/
 *   (GET https://{subdomain}.zendesk.com/oauth/authorizations/new with `response_type=code`, `redirect_uri`,
 *   `client_id`, `scope` (space separated: `read write`), `state`; the redirect back: `code` and `state`, or
 *   `error=access_denied` and `error_description`; POST /oauth/tokens, JSON or form, with `grant_type`, `code`,
 *   `client_id`, `client_secret`, `redirect_uri`, `scope`; the answer: `access_token`, `token_type: "bearer"`,
 *   `scope`: no expiry and no refresh token for a token asked without `expires_in`)
 * - https://developer.zendesk.com/api-reference/ticketing/users/users/#show-self (GET /api/v2/users/me.json;
 *   a bad token: 401 `{"error": "invalid_token", "error_description": ...}`)
 */
import {
  Grants,
  bearerOf,
  consentPage,
  json,
  newState,
  opaque,
  pendingFrom,
  redirect,
  type ProviderSimulator,
  type SimRequest,
} from './framework.js';

const SUBDOMAIN = 'acme-support';
const HOST = `${SUBDOMAIN}.zendesk.com`;

/** POST /oauth/tokens takes JSON (the docs' examples) or a form. */
function tokenParams(req: SimRequest): URLSearchParams {
  if (String(req.headers['content-type'] ?? '').includes('application/json')) {
    const body = JSON.parse(req.body || '{}') as Record<string, unknown>;
    return new URLSearchParams(Object.entries(body).map(([k, v]) => [k, String(v)]));
  }
  return req.form;
}

export function zendesk(): ProviderSimulator {
  const state = newState();
  const grants = new Grants(state);
  const client = { clientId: 'latchkey_test_client', clientSecret: opaque('', 32) };

  return {
    manifest: 'zendesk',
    hosts: ['*.zendesk.com'],
    docs: [
      'https://developer.zendesk.com/documentation/ticketing/working-with-oauth/creating-and-using-oauth-tokens-with-the-api/',
      'https://developer.zendesk.com/api-reference/ticketing/users/users/#show-self',
    ],
    client,
    state,
    routes: [
      {
        method: 'GET',
        host: '*.zendesk.com',
        path: '/oauth/authorizations/new',
        handler: (req) => {
          if (req.host !== HOST)
            return { status: 404, headers: { 'content-type': 'text/html' }, body: '<h1>Oops! This help center no longer exists</h1>' };
          if (req.query.get('client_id') !== client.clientId)
            return json(400, { error: 'invalid_client', error_description: 'Client authentication failed' });
          const redirectUri = req.query.get('redirect_uri')!;
          const st = req.query.get('state') ?? '';
          const code = grants.issueCode(pendingFrom(req));
          return consentPage(
            'Zendesk',
            redirect(redirectUri, { code, state: st }).headers!.location!,
            redirect(redirectUri, {
              error: 'access_denied',
              error_description: 'The end-user or authorization server denied the request.',
              state: st,
            }).headers!.location!,
          );
        },
      },
      {
        method: 'POST',
        host: '*.zendesk.com',
        path: '/oauth/tokens',
        handler: (req) => {
          const p = tokenParams(req);
          if (p.get('client_id') !== client.clientId || p.get('client_secret') !== client.clientSecret)
            return json(401, {
              error: 'invalid_client',
              error_description:
                'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.',
            });
          if (p.get('grant_type') !== 'authorization_code')
            return json(400, {
              error: 'unsupported_grant_type',
              error_description: 'The authorization grant type is not supported by the authorization server.',
            });
          const grant = grants.takeCode(p.get('code'));
          if (!grant || p.get('redirect_uri') !== grant.redirectUri)
            return json(400, {
              error: 'invalid_grant',
              error_description:
                'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
            });
          const { accessToken } = grants.issueTokens(grant);
          return json(200, { access_token: accessToken, token_type: 'bearer', scope: grant.scope || 'read write' });
        },
      },
      {
        method: 'GET',
        host: '*.zendesk.com',
        path: '/api/v2/users/me.json',
        handler: (req) => {
          if (!grants.validAccess(bearerOf(req)))
            return json(401, {
              error: 'invalid_token',
              error_description: 'The access token provided is expired, revoked, malformed or invalid for other reasons.',
            });
          return json(200, {
            user: {
              id: 35436,
              url: `https://${HOST}/api/v2/users/35436.json`,
              name: 'Johnny Agent',
              email: 'johnny@example.com',
              role: 'agent',
              active: true,
              verified: true,
              time_zone: 'Copenhagen',
              locale: 'en-US',
            },
          });
        },
      },
    ],
    e2e: {
      // The subdomain is the one value the end user knows and types (it is in the authorize URL itself).
      typed: { subdomain: SUBDOMAIN },
      expectConfig: { subdomain: SUBDOMAIN },
      api: { method: 'GET', path: '/api/v2/users/me.json', answer: { user: { id: 35436, role: 'agent' } } },
      refreshes: false,
      failure: 'denied',
    },
  };
}
