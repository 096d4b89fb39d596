/**
 * Jira Data Center's OAuth 2.0 provider API on a self-managed server (here `jira.acme-corp.example`, the host the
 * platform team names on the Integration), as Atlassian's pages describe it:
 * - https://confluence.atlassian.com/adminjiraserver101/jira-oauth-2-0-provider-api-1455427907.html: the
 *   authorization code flow with PKCE, and without; every authorization request goes to
 *   /rest/oauth2/latest/authorize on the Jira server with `state`; the client ID and secret come from the incoming
 *   link. The simulator requires `code_challenge` with `code_challenge_method=S256` (Latchkey always sends it: the
 *   PKCE flow of the page) and the `code_verifier` on the exchange.
 * - https://confluence.atlassian.com/enterprise/service-accounts-overview-1627095923.html: POST
 *   https://your-dc-instance/rest/oauth2/latest/token with `grant_type`, `client_id`, `client_secret` as parameters
 *   (read here from the form body, or from the query where a POST has no body, as Atlassian's curl examples put them).
 * - https://confluence.atlassian.com/adminjiraserver101/oauth-2-0-scopes-for-incoming-links-1455427906.html: scopes
 *   READ, WRITE, ADMIN, SYSTEM_ADMIN.
 * - https://developer.atlassian.com/server/jira-servicedesk/rest/v1103/api-group-myself/: GET /rest/api/latest/myself,
 *   the user the request acts as (`self`, `key`, `name`, `displayName`).
 * Silent (in the pages read): the token answer's fields beyond RFC 6749 §5.1 (answered here as `access_token`,
 * `token_type`, `expires_in`, `refresh_token`), the token errors' descriptions (RFC 6749 codes here, none), whether a
 * refresh returns a new refresh token (the simulator rotates it: the stricter reading), the answer to an invalid
 * bearer token (401 here), what a denied consent sends (the test provokes a refused code).
 * A server may live under a context path (`http://<HOST>:<PORT>/jira/rest/...` is `<Jira Base URL>/rest/...`,
 * https://jira.atlassian.com/browse/JRASERVER-72133): `jiraDataCenter({ contextPath: '/jira' })` serves every
 * endpoint under it, and nothing at the host's root.
 */
import { e2eCase, json, oauth2Provider, oauthErrors, opaqueClient, route, tokenAnswer, type ProviderSimulator } from './framework.js';

/** The self-managed server the platform team's Integration names. */
export const JIRA_DC_HOST = 'jira.acme-corp.example';
const MYSELF = { key: 'JIRAUSER10100', name: 'ada', displayName: 'Ada Lovelace' };

/**
 * What differs between Atlassian's Data Center products for this simulator: the manifest, the server, the pages
 * read and the documented API call. The OAuth 2.0 provider API (authorize, token, scopes) is the same on Jira and
 * Confluence (test/support/simulators/confluence-data-center.ts cites Confluence's pages).
 */
export interface DataCenterProduct {
  manifest: string;
  provider: string;
  host: string;
  /** The server's context path (`/jira`), or none: every endpoint is served under it. */
  contextPath?: string;
  docs: string[];
  /** The documented call: its path on the server, the answer, and the call as the proxy is given it. */
  api: { path: string; answer: Record<string, unknown>; call: string };
}

export function jiraDataCenter(opts: { contextPath?: string } = {}): ProviderSimulator {
  const base = `https://${JIRA_DC_HOST}${opts.contextPath ?? ''}`;
  return atlassianDataCenter({
    manifest: 'jira-data-center',
    provider: 'Jira Data Center',
    host: JIRA_DC_HOST,
    ...(opts.contextPath ? { contextPath: opts.contextPath } : {}),
    docs: [
      'https://confluence.atlassian.com/adminjiraserver101/jira-oauth-2-0-provider-api-1455427907.html',
      'https://confluence.atlassian.com/enterprise/service-accounts-overview-1627095923.html',
      'https://confluence.atlassian.com/adminjiraserver101/oauth-2-0-scopes-for-incoming-links-1455427906.html',
      'https://developer.atlassian.com/server/jira-servicedesk/rest/v1103/api-group-myself/',
    ],
    api: {
      path: '/rest/api/latest/myself',
      answer: { self: `${base}/rest/api/2/user?username=${MYSELF.name}`, ...MYSELF },
      call: 'GET /myself',
    },
  });
}

/** The OAuth 2.0 provider API of an Atlassian Data Center server, and one documented REST call on it. */
export function atlassianDataCenter(product: DataCenterProduct): ProviderSimulator {
  const client = opaqueClient(16, 32);
  const host = product.host;
  const base = `https://${host}${product.contextPath ?? ''}`;
  const config = { host, ...(product.contextPath ? { contextPath: product.contextPath } : {}) };
  return oauth2Provider({
    manifest: product.manifest,
    docs: product.docs,
    client,
    authorize: {
      url: `${base}/rest/oauth2/latest/authorize`,
      provider: product.provider,
      check: (req) =>
        req.query.get('code_challenge') && req.query.get('code_challenge_method') === 'S256' && req.query.get('state')
          ? undefined
          : { status: 400, headers: { 'content-type': 'text/plain' }, body: 'state and code_challenge (S256) are required' },
    },
    token: {
      url: `${base}/rest/oauth2/latest/token`,
      auth: 'body',
      pkceRequired: true,
      refresh: { rotate: true },
      // The parameters in the body, or in the query of a POST without one.
      wrap: (usual) => (req) => usual(req.body === '' ? { ...req, form: req.query } : req),
    },
    answer: tokenAnswer('access_token token_type expires_in refresh_token', { token_type: 'Bearer', expires_in: 3600 }),
    error: oauthErrors({}),
    api: (grants) => [
      route(`GET ${base}${product.api.path}`, (req) => {
        const auth = req.headers.authorization;
        return auth?.startsWith('Bearer ') && grants.validAccess(auth.slice(7)) ? json(200, product.api.answer) : { status: 401 };
      }),
    ],
    e2e: e2eCase(product.api.call, product.api.answer, {
      expectConfig: config,
      integration: { connectionConfig: config },
      scopes: ['READ', 'WRITE'],
      refreshes: true,
      failure: 'refused-code',
    }),
  });
}
