/**
 * Atlassian Cloud (Jira, Confluence) with OAuth 2.0 (3LO), as its docs describe it:
 * - https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/ and
 *   https://developer.atlassian.com/cloud/confluence/oauth-2-3lo-apps/ (authorize at auth.atlassian.com/authorize
 *   with `audience=api.atlassian.com`; the redirect back with `code` and `state`; the token request at
 *   auth.atlassian.com/oauth/token as JSON; its answer: `access_token`, `expires_in`, `scope` (and a refresh token
 *   with `offline_access`), no `token_type`; the sites: `GET https://api.atlassian.com/oauth/token/accessible-resources`
 *   answers a list of `{id, name, url, scopes, avatarUrl}`; API calls go to
 *   `https://api.atlassian.com/ex/jira/{cloudid}/{api}` or `.../ex/confluence/{cloudid}/{api}`)
 * - https://developer.atlassian.com/cloud/oauth/getting-started/refresh-tokens/ (rotating refresh tokens: a refresh
 *   returns `access_token`, `refresh_token`, `expires_in`, `scope`; the used one is disabled; errors as HTTP 403
 *   `{"error": "invalid_grant", "error_description": "Unknown or invalid refresh token."}`)
 * - Jira: https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-projects/#api-rest-api-3-project-search-get
 *   (`GET /rest/api/3/project/search`)
 * - Confluence: https://developer.atlassian.com/cloud/confluence/rest/v2/api-group-space/#api-spaces-get
 *   (`GET /wiki/api/v2/spaces`)
 */
import type { ProviderCase, ProviderSimulator, SimRequest } from './framework.js';
import { getRoute, json, oauth2Provider, opaque, opaqueClient, tokenAnswer } from './framework.js';

const CLOUD_ID = '1324a887-45db-1bf4-1e99-ef0ff456d421';
const SITE = 'https://acme.atlassian.net';

/** One site of accessible-resources' answer (`id` is its cloud ID). */
export interface AtlassianSite {
  id: string;
  name: string;
  url: string;
}
/** The one site a grant covers unless a test gives more (the making-calls-to-api page's example, as a site). */
const ACME: AtlassianSite = { id: CLOUD_ID, name: 'acme', url: SITE };
const unauthorized = () => json(401, { code: 401, message: 'Unauthorized' }, 'application/json;charset=UTF-8');

function atlassianProduct(
  manifest: string,
  product: 'jira' | 'confluence',
  api: { path: string; body: Record<string, unknown> },
  e2e: Pick<ProviderCase, 'api' | 'failure'>,
  sites: AtlassianSite[] = [ACME],
): ProviderSimulator {
  return oauth2Provider({
    manifest,
    docs: [`https://developer.atlassian.com/cloud/${product === 'jira' ? 'jira/platform' : 'confluence'}/oauth-2-3lo-apps/`],
    client: opaqueClient(16, `ATOA${opaque('', 30)}`),
    authorize: {
      url: 'https://auth.atlassian.com/authorize',
      provider: 'Atlassian',
      wrap: (consent) => (req: SimRequest) =>
        req.query.get('audience') === 'api.atlassian.com'
          ? consent(req)
          : { status: 400, headers: { 'content-type': 'text/plain' }, body: 'audience must be api.atlassian.com' },
    },
    token: {
      url: 'https://auth.atlassian.com/oauth/token',
      auth: 'body',
      // The docs show JSON; a form body (RFC 6749) is read too.
      acceptsJson: true,
      refresh: { rotate: true },
      accessPrefix: 'eyJraWQiOiJhdXRoLmF0bGFzc2lhbi5jb20t.',
    },
    answer: tokenAnswer('access_token refresh_token expires_in scope', { expires_in: 3600 }),
    error: (code) =>
      json(403, {
        error: code === 'invalid_client' ? 'access_denied' : code,
        error_description: code === 'invalid_grant' ? 'Unknown or invalid refresh token.' : 'Unauthorized',
      }),
    api: [
      getRoute(
        'https://api.atlassian.com/oauth/token/accessible-resources',
        unauthorized,
        json(
          200,
          // Every site the grant covers, "in no particular order".
          sites.map((site) => ({
            id: site.id,
            name: site.name,
            url: site.url,
            scopes:
              product === 'jira'
                ? ['read:jira-work', 'read:jira-user', 'write:jira-work']
                : ['read:page:confluence', 'read:space:confluence'],
            avatarUrl: 'https://site-admin-avatar-cdn.prod.public.atl-paas.net/avatars/240/flag.png',
          })),
        ),
      ),
      ...sites.map((site) =>
        getRoute(
          `https://api.atlassian.com/ex/${product}/${site.id}${api.path}`,
          unauthorized,
          json(200, api.body, 'application/json;charset=UTF-8'),
        ),
      ),
    ],
    e2e: { expectConfig: { cloudId: CLOUD_ID, siteHost: 'acme.atlassian.net' }, refreshes: true, ...e2e },
  });
}

/** `sites`: the sites one grant covers (default one). */
export const jira = (sites?: AtlassianSite[]): ProviderSimulator =>
  atlassianProduct(
    'jira',
    'jira',
    {
      path: '/rest/api/3/project/search',
      body: {
        self: `${SITE}/rest/api/3/project/search?maxResults=50&startAt=0`,
        maxResults: 50,
        startAt: 0,
        total: 1,
        isLast: true,
        values: [{ id: '10000', key: 'EX', name: 'Example', projectTypeKey: 'software', simplified: false, style: 'classic' }],
      },
    },
    { api: { method: 'GET', path: '/rest/api/3/project/search', answer: { total: 1, values: [{ key: 'EX' }] } }, failure: 'refused-code' },
    sites,
  );

export const confluence = (sites?: AtlassianSite[]): ProviderSimulator =>
  atlassianProduct(
    'confluence',
    'confluence',
    {
      path: '/wiki/api/v2/spaces',
      body: {
        results: [
          { id: '98306', key: 'ENG', name: 'Engineering', type: 'global', status: 'current', authorId: '5b10ac8d82e05b22cc7d4ef5' },
        ],
        _links: { base: `${SITE}/wiki` },
      },
    },
    { api: { method: 'GET', path: '/wiki/api/v2/spaces?limit=25', answer: { results: [{ key: 'ENG' }] } }, failure: 'denied' },
    sites,
  );
