/**
 * Confluence Data Center's OAuth 2.0 provider API on a self-managed server (here `confluence.acme-corp.example`, the
 * host the platform team names on the Integration). The same API as Jira Data Center's (the simulator is shared,
 * test/support/simulators/jira-data-center.ts), as Atlassian's Confluence pages describe it:
 * - https://developer.atlassian.com/server/confluence/confluence-oauth2-provider-api/ (Confluence 7.17 or later):
 *   the authorization code flow, with or without PKCE; the state parameter "with each request to the
 *   /rest/oauth2/latest/authorize endpoint".
 * - https://confluence.atlassian.com/confkb/oauth-2-0-configuration-for-confluence-1224638905.html: the incoming
 *   link gives the client ID and client secret.
 * - https://confluence.atlassian.com/enterprise/service-accounts-overview-1627095923.html (Jira and Confluence Data
 *   Center): POST https://your-dc-instance/rest/oauth2/latest/token with `client_id` and `client_secret` as parameters.
 * - https://confluence.atlassian.com/display/DOC/OAuth+2.0+scopes+for+incoming+links: READ, WRITE, ADMIN, SYSTEM_ADMIN.
 * - https://docs.atlassian.com/atlassian-confluence/6.2.1/com/atlassian/confluence/plugins/restapi/resources/UserResource.html:
 *   GET /rest/api/user/current, "information about the current logged in user" (example request URI
 *   http://example.com/rest/api/user/current).
 * Silent (in the pages read), as for Jira: the token answer's fields beyond RFC 6749 §5.1, the token errors'
 * descriptions, whether a refresh rotates the refresh token (rotated here, the stricter reading), the answer to an
 * invalid bearer token (401 here), and the current user's JSON fields (the page names the resource, not its body:
 * answered here with `username`, `userKey`, `displayName` as a user's fields; the test checks only that
 * the proxy returns the server's answer unchanged).
 */
import { atlassianDataCenter } from './jira-data-center.js';
import type { ProviderSimulator } from './framework.js';

/** The self-managed server the platform team's Integration names. */
export const CONFLUENCE_DC_HOST = 'confluence.acme-corp.example';

export function confluenceDataCenter(): ProviderSimulator {
  return atlassianDataCenter({
    manifest: 'confluence-data-center',
    provider: 'Confluence Data Center',
    host: CONFLUENCE_DC_HOST,
    docs: [
      'https://developer.atlassian.com/server/confluence/confluence-oauth2-provider-api/',
      'https://confluence.atlassian.com/confkb/oauth-2-0-configuration-for-confluence-1224638905.html',
      'https://confluence.atlassian.com/enterprise/service-accounts-overview-1627095923.html',
      'https://confluence.atlassian.com/display/DOC/OAuth+2.0+scopes+for+incoming+links',
      'https://docs.atlassian.com/atlassian-confluence/6.2.1/com/atlassian/confluence/plugins/restapi/resources/UserResource.html',
    ],
    // The manifest's proxy base is the server itself: proxied paths are the server's /rest/api/... paths.
    api: {
      path: '/rest/api/user/current',
      answer: { username: 'ada', userKey: '8a7f808a6d1a0f3c016d1a1234560001', displayName: 'Ada Lovelace' },
      call: 'GET /rest/api/user/current',
    },
  });
}
