/**
 * Bullhorn's REST API, as its docs describe it:
 * - https://bullhorn.github.io/Getting-Started-with-REST/ (GET https://auth.bullhornstaffing.com/oauth/authorize with
 *   `client_id`, `response_type=code`, `redirect_uri`, `state`; the redirect back carries `code`; a POST to
 *   /oauth/token with `grant_type=authorization_code`, `code`, `client_id`, `client_secret`, `redirect_uri` in the
 *   URL's query, and `grant_type=refresh_token` with `refresh_token` the same way; "the access token is valid for
 *   10 minutes"; "a new refresh token is returned with every new access token", the old one then expires. The
 *   second login: POST https://rest.bullhornstaffing.com/rest-services/login?version=*&access_token=…, answered
 *   `{"BhRestToken": "…", "restUrl": "https://rest.bullhornstaffing.com/rest-services/{corpToken}/"}`; the entity
 *   call GET {restUrl}entity/Candidate/{id}?fields=firstName,lastName,address answered `{"data": {...}}`)
 * - https://bullhorn.github.io/rest-api-docs/#login (`access_token` and `version` required; the error "Invalid or
 *   expired OAuth access token.")
 * - https://bullhorn.github.io/rest-api-docs/#authentication (the session key in a `BhRestToken` query parameter,
 *   header or cookie; no session key: 412; an invalid one: 401)
 * - https://bullhorn.github.io/rest-api-docs/ ("All URLs are namespaced by corporation":
 *   https://rest{swimlane#}.bullhornstaffing.com/rest-services/{corptoken}/entity/Candidate, `e999` its example)
 * The docs show no token answer body: its fields are RFC 6749's names for the access token, its lifetime and the
 * refresh token they describe. They show no token error body either: an RFC 6749 error answer stands in. They name
 * no PKCE parameters: this server ignores them, as one that does not know them does. They do not say how long an
 * idle session lives: a test ends sessions itself (`expireSessions`).
 */
import { json, oauth2Provider, oauthError, opaque, route, tokenAnswer, type ProviderSimulator, type SimRequest } from './framework.js';

/** The data centre the login answer names (`rest{swimlane#}`), and the corporation's token (the docs' `e999`). */
export const REST_HOST = 'rest22.bullhornstaffing.com';
export const CORP_TOKEN = 'e999';

export interface BullhornSimulator extends ProviderSimulator {
  /** Session keys issued by the login, newest last. */
  sessions: string[];
  /** Ends every session (as an idle timeout does): later calls with those keys are answered 401. */
  expireSessions(): void;
  /**
   * The next login is answered `status` (503 when not set: Bullhorn unavailable; the test's knob, not a
   * documented answer; the docs' 401 "Invalid or expired OAuth access token." for 401).
   */
  failNextLogin: { value: boolean; status?: number };
  /** The data centre the login's `restUrl` names (a corporation moved to another swimlane: the test's knob). */
  restHost: { value: string };
}

export function bullhorn(): BullhornSimulator {
  const client = { clientId: opaque('', 16), clientSecret: opaque('', 12) };
  const sessions: string[] = [];
  const valid = new Set<string>();
  const failNextLogin: { value: boolean; status?: number } = { value: false };
  const restHost = { value: REST_HOST };
  /** The session key as the docs let a client send it: the `BhRestToken` query parameter, header or cookie. */
  const sessionOf = (req: SimRequest): string | undefined => {
    const header = req.headers.bhresttoken;
    if (typeof header === 'string') return header;
    const query = req.query.get('BhRestToken') ?? req.query.get('BHRestToken');
    if (query) return query;
    return /(?:^|;\s*)BhRestToken=([^;]+)/i.exec(req.headers.cookie ?? '')?.[1];
  };
  const sim = oauth2Provider({
    manifest: 'bullhorn',
    docs: [
      'https://bullhorn.github.io/Getting-Started-with-REST/',
      'https://bullhorn.github.io/rest-api-docs/#login',
      'https://bullhorn.github.io/rest-api-docs/#authentication',
    ],
    client,
    authorize: {
      url: 'https://auth.bullhornstaffing.com/oauth/authorize',
      provider: 'Bullhorn',
      // No PKCE in the docs: a code challenge is not kept (the token request's verifier is then not checked).
      wrap: (consent) => (req) => {
        const query = new URLSearchParams(req.query);
        query.delete('code_challenge');
        query.delete('code_challenge_method');
        return consent({ ...req, query });
      },
    },
    token: {
      url: 'https://auth.bullhornstaffing.com/oauth/token',
      // The parameters are in the URL's query of the POST (the docs show no body).
      wrap: (usual) => (req) => usual({ ...req, form: new URLSearchParams(req.query) }),
      auth: 'body',
      refresh: { rotate: true },
    },
    answer: tokenAnswer('access_token token_type expires_in refresh_token', { token_type: 'Bearer', expires_in: 600 }),
    error: oauthError(),
    api: (grants) => [
      route('POST https://rest.bullhornstaffing.com/rest-services/login', (req) => {
        if (failNextLogin.value) {
          failNextLogin.value = false;
          if (failNextLogin.status === 401)
            return { status: 401, headers: { 'content-type': 'text/plain' }, body: 'Invalid or expired OAuth access token.' };
          return { status: failNextLogin.status ?? 503 };
        }
        // The docs give the error's words, not its status or body: a 401 with those words stands in.
        if (!req.query.get('version')) return { status: 400 };
        if (!grants.validAccess(req.query.get('access_token') ?? undefined))
          return { status: 401, headers: { 'content-type': 'text/plain' }, body: 'Invalid or expired OAuth access token.' };
        const key = `${opaque('', 4)}-${opaque('', 2)}-${opaque('', 2)}-${opaque('', 2)}-${opaque('', 6)}`;
        sessions.push(key);
        valid.add(key);
        return json(200, { BhRestToken: key, restUrl: `https://${restHost.value}/rest-services/${CORP_TOKEN}/` });
      }),
      {
        method: 'GET',
        // Any swimlane's REST host (`rest{swimlane#}`): the one the login named.
        host: '*.bullhornstaffing.com',
        path: new RegExp(`^/rest-services/${CORP_TOKEN}/entity/Candidate/\\d+$`),
        handler: (req) => {
          const key = sessionOf(req);
          // The docs give these statuses, not their bodies.
          if (key === undefined) return { status: 412 };
          if (!valid.has(key)) return { status: 401 };
          return json(200, {
            data: {
              firstName: 'FName01',
              lastName: 'LName01',
              address: {
                address1: '123 Address1 Ave',
                address2: '# suite address2',
                city: 'Cityville',
                state: 'MA',
                zip: '01754',
                countryID: 1,
              },
            },
          });
        },
      },
    ],
    e2e: {
      // The data centre's hosts keep their defaults (U.S. East); the form is submitted as it is shown.
      typed: {},
      expectConfig: {
        authHost: 'auth.bullhornstaffing.com',
        loginHost: 'rest.bullhornstaffing.com',
        restHost: REST_HOST,
        corpToken: CORP_TOKEN,
      },
      api: {
        method: 'GET',
        path: '/entity/Candidate/123?fields=firstName,lastName,address',
        answer: { data: { firstName: 'FName01', lastName: 'LName01' } },
      },
      refreshes: true,
      failure: 'refused-code',
    },
  });
  return {
    ...sim,
    sessions,
    expireSessions: () => valid.clear(),
    failNextLogin,
    restHost,
  };
}
