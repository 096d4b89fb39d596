/**
 * Google's OAuth 2.0 for web server applications and three of its APIs, as their docs describe them:
 * - https://developers.google.com/identity/protocols/oauth2/web-server (authorize at accounts.google.com
 *   /o/oauth2/v2/auth; the redirect back with `state`, `code` and `scope`, or `error=access_denied`; the token
 *   answer at oauth2.googleapis.com/token: `access_token`, `expires_in` (a number), `refresh_token` (with
 *   access_type=offline), `scope`, `token_type: "Bearer"`; a refresh answers without a refresh token; errors
 *   as HTTP 400 `{"error": "invalid_grant", "error_description": "Bad Request"}`; client credentials in the
 *   body or by HTTP Basic; PKCE optional)
 * - https://developers.google.com/identity/protocols/oauth2/web-server#incrementalAuth (`include_granted_scopes=true`:
 *   the new grant, and the token answer's `scope`, cover the scopes asked for and every scope the user granted the
 *   application before; without it, only those asked for)
 * - https://cloud.google.com/apis/design/errors (API errors: `{"error": {"code", "message", "errors", "status"}}`,
 *   401 `UNAUTHENTICATED` for a bad token)
 * - Calendar: https://developers.google.com/workspace/calendar/api/v3/reference/calendarList/list
 *   (`GET https://www.googleapis.com/calendar/v3/users/me/calendarList`)
 * - Gmail: https://developers.google.com/workspace/gmail/api/reference/rest/v1/users.messages/list
 *   (`GET https://gmail.googleapis.com/gmail/v1/users/{userId}/messages`)
 * - Drive: https://developers.google.com/workspace/drive/api/reference/rest/v3/files/list
 *   (`GET https://www.googleapis.com/drive/v3/files`)
 */
import type { ProviderCase, ProviderSimulator, SimRequest } from './framework.js';
import { getRoute, json, oauth2Provider, opaque, tokenAnswer } from './framework.js';

const GOOGLE_JSON = 'application/json; charset=utf-8';
const googleJson = (status: number, body: unknown) => json(status, body, GOOGLE_JSON);
const UNAUTHENTICATED = googleJson(401, {
  error: {
    code: 401,
    message:
      'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
    errors: [{ message: 'Invalid Credentials', domain: 'global', reason: 'authError', location: 'Authorization', locationType: 'header' }],
    status: 'UNAUTHENTICATED',
  },
});

interface GoogleApi {
  manifest: string;
  host: string;
  path: string;
  body: Record<string, unknown>;
  e2e: Pick<ProviderCase, 'api'>;
}

function googleProduct(api: GoogleApi): ProviderSimulator {
  // The scopes the (one simulated) user granted this client so far, for incremental authorization.
  const granted = new Set<string>();
  return oauth2Provider({
    manifest: api.manifest,
    docs: ['https://developers.google.com/identity/protocols/oauth2/web-server'],
    client: { clientId: `${opaque('', 6)}-${opaque('', 16)}.apps.googleusercontent.com`, clientSecret: `GOCSPX-${opaque('', 14)}` },
    authorize: {
      url: 'https://accounts.google.com/o/oauth2/v2/auth',
      provider: 'Google',
      // The redirect back also names the granted scopes (`scope`), as the web-server guide's example shows.
      extra: (req) => ({ scope: req.query.get('scope') ?? '' }),
      codePrefix: '4/0A',
      // Incremental authorization: with include_granted_scopes=true the grant covers every scope granted before too.
      wrap: (consent) => (req: SimRequest) => {
        const asked = (req.query.get('scope') ?? '').split(' ').filter(Boolean);
        const scopes = req.query.get('include_granted_scopes') === 'true' ? [...new Set([...granted, ...asked])] : asked;
        for (const s of asked) granted.add(s);
        const query = new URLSearchParams(req.query);
        query.set('scope', scopes.join(' '));
        return consent({ ...req, query });
      },
    },
    token: {
      url: 'https://oauth2.googleapis.com/token',
      auth: 'either',
      refresh: { rotate: false },
      accessPrefix: 'ya29.a0',
      refreshPrefix: '1//0g',
    },
    answer: tokenAnswer('access_token expires_in refresh_token scope token_type', { expires_in: 3599, token_type: 'Bearer' }, GOOGLE_JSON),
    error: (code) =>
      googleJson(code === 'invalid_client' ? 401 : 400, {
        error: code,
        error_description: code === 'invalid_client' ? 'Unauthorized' : 'Bad Request',
      }),
    api: [getRoute(`https://${api.host}${api.path}`, UNAUTHENTICATED, googleJson(200, api.body))],
    e2e: { expectConfig: {}, refreshes: true, failure: 'denied', ...api.e2e },
  });
}

export const googleCalendar = (): ProviderSimulator =>
  googleProduct({
    manifest: 'google-calendar',
    host: 'www.googleapis.com',
    path: '/calendar/v3/users/me/calendarList',
    body: {
      kind: 'calendar#calendarList',
      etag: '"p33g9h6c3ngf2g0o"',
      nextSyncToken: 'CJDzq8vW7IkDEhFhbGljZUBleGFtcGxlLmNvbQ==',
      items: [
        { kind: 'calendar#calendarListEntry', id: 'alice@example.com', summary: 'alice@example.com', primary: true, accessRole: 'owner' },
      ],
    },
    e2e: { api: { method: 'GET', path: '/calendar/v3/users/me/calendarList', answer: { kind: 'calendar#calendarList' } } },
  });

export const gmail = (): ProviderSimulator =>
  googleProduct({
    manifest: 'google-mail',
    host: 'gmail.googleapis.com',
    path: '/gmail/v1/users/me/messages',
    body: { messages: [{ id: '18c2b5e0a1f4d3c2', threadId: '18c2b5e0a1f4d3c2' }], resultSizeEstimate: 1 },
    e2e: { api: { method: 'GET', path: '/gmail/v1/users/me/messages?maxResults=10', answer: { resultSizeEstimate: 1 } } },
  });

export const googleDrive = (): ProviderSimulator =>
  googleProduct({
    manifest: 'google-drive',
    host: 'www.googleapis.com',
    path: '/drive/v3/files',
    body: {
      kind: 'drive#fileList',
      incompleteSearch: false,
      files: [{ kind: 'drive#file', mimeType: 'application/vnd.google-apps.document', id: '1a2B3c4D5e6F7g8H9i0J', name: 'Plan' }],
    },
    e2e: { api: { method: 'GET', path: '/drive/v3/files?pageSize=10', answer: { kind: 'drive#fileList' } } },
  });
