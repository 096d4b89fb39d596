/**
 * Trello (OAuth 1.0a), as its docs describe it:
 * - https://developer.atlassian.com/cloud/trello/guides/rest-api/authorization/ ("Using Basic OAuth": request
 *   token at POST https://trello.com/1/OAuthGetRequestToken, the user's authorization at
 *   https://trello.com/1/OAuthAuthorizeToken with `oauth_token`, `name` (shown on the consent page), `scope`
 *   (comma separated `read`, `write`, `account`; `read` when absent) and `expiration` (`1hour`, `1day`, `30days`,
 *   `never`), the redirect back with `oauth_token` and `oauth_verifier`, and the access token at POST
 *   https://trello.com/1/OAuthGetAccessToken; HMAC-SHA1 signatures, RFC 5849; answers form-encoded)
 * - https://developer.atlassian.com/cloud/trello/rest/api-group-boards/#api-boards-post (POST /1/boards/?name=...:
 *   needs the `write` scope; a token without it is refused with 401 `unauthorized permission requested`;
 *   a bad token: 401 `invalid token`, text/plain)
 */
import { createHmac } from 'node:crypto';
import { consentPage, newState, opaque, type ProviderSimulator, type SimAnswer, type SimRequest } from './framework.js';

/** RFC 3986 percent-encoding, as RFC 5849 section 3.6 requires. */
const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The `Authorization: OAuth k="v", ...` parameters. */
function oauthParams(req: SimRequest): Map<string, string> | undefined {
  const header = req.headers.authorization;
  if (!header?.startsWith('OAuth ')) return undefined;
  const params = new Map<string, string>();
  for (const m of header.slice(6).matchAll(/([A-Za-z0-9_]+)="([^"]*)"/g)) params.set(decodeURIComponent(m[1]!), decodeURIComponent(m[2]!));
  return params;
}

/** Checks an HMAC-SHA1 signature (RFC 5849 sections 3.4.1-3.4.2) with the given secrets. */
function signatureValid(req: SimRequest, oauth: Map<string, string>, consumerSecret: string, tokenSecret: string): boolean {
  if (oauth.get('oauth_signature_method') !== 'HMAC-SHA1') return false;
  const pairs: Array<[string, string]> = [...req.query.entries(), ...req.form.entries()];
  for (const [k, v] of oauth) if (k !== 'oauth_signature' && k !== 'realm') pairs.push([k, v]);
  const normalized = pairs
    .map(([k, v]) => [enc(k), enc(v)] as const)
    .sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const base = [req.method.toUpperCase(), enc(`https://${req.host}${req.path}`), enc(normalized)].join('&');
  const expected = createHmac('sha1', `${enc(consumerSecret)}&${enc(tokenSecret)}`)
    .update(base)
    .digest('base64');
  return expected === oauth.get('oauth_signature');
}

const text = (status: number, body: string): SimAnswer => ({ status, headers: { 'content-type': 'text/plain; charset=utf-8' }, body });
const form = (params: Record<string, string>): SimAnswer => ({
  status: 200,
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(params).toString(),
});

interface RequestToken {
  secret: string;
  callback: string;
  verifier?: string;
  scope?: string;
}

export function trello(): ProviderSimulator {
  const state = newState();
  const client = { clientId: opaque('', 16), clientSecret: opaque('', 32) };
  const requestTokens = new Map<string, RequestToken>();
  const accessTokens = new Map<string, { secret: string; scope: string[] }>();

  /** The consumer key and signature of a request; `tokenSecret` for the token it names. */
  const verified = (req: SimRequest, tokenSecret: (token: string) => string | undefined) => {
    const oauth = oauthParams(req);
    if (!oauth || oauth.get('oauth_consumer_key') !== client.clientId) return undefined;
    const token = oauth.get('oauth_token');
    const secret = token === undefined ? '' : tokenSecret(token);
    if (secret === undefined || !signatureValid(req, oauth, client.clientSecret, secret)) return undefined;
    return oauth;
  };

  return {
    manifest: 'trello',
    hosts: ['trello.com', 'api.trello.com'],
    docs: [
      'https://developer.atlassian.com/cloud/trello/guides/rest-api/authorization/',
      'https://developer.atlassian.com/cloud/trello/rest/api-group-boards/#api-boards-post',
    ],
    client,
    state,
    routes: [
      {
        method: 'POST',
        host: 'trello.com',
        path: '/1/OAuthGetRequestToken',
        handler: (req) => {
          const oauth = verified(req, () => undefined);
          if (!oauth) return text(401, 'invalid signature');
          const callback = oauth.get('oauth_callback');
          if (!callback) return text(400, 'oauth_callback required');
          const token = opaque('', 16);
          const secret = opaque('', 16);
          requestTokens.set(token, { secret, callback });
          return form({ oauth_token: token, oauth_token_secret: secret, oauth_callback_confirmed: 'true' });
        },
      },
      {
        method: 'GET',
        host: 'trello.com',
        path: '/1/OAuthAuthorizeToken',
        handler: (req) => {
          const token = req.query.get('oauth_token') ?? '';
          const pending = requestTokens.get(token);
          if (!pending) return text(400, 'invalid token');
          // The docs: scope is read unless the authorize URL asks for more.
          pending.scope = req.query.get('scope') ?? 'read';
          pending.verifier = opaque('', 16);
          const back = new URL(pending.callback);
          back.searchParams.set('oauth_token', token);
          back.searchParams.set('oauth_verifier', pending.verifier);
          // Deny leaves the user on Trello (nothing is sent back to the application).
          return consentPage(
            `Trello: let ${req.query.get('name') ?? 'An unknown application'} use your account?`,
            back.href,
            'https://trello.com/',
          );
        },
      },
      {
        method: 'POST',
        host: 'trello.com',
        path: '/1/OAuthGetAccessToken',
        handler: (req) => {
          const oauth = verified(req, (t) => requestTokens.get(t)?.secret);
          if (!oauth) return text(401, 'invalid signature');
          const token = oauth.get('oauth_token')!;
          const pending = requestTokens.get(token)!;
          requestTokens.delete(token);
          if (state.refuseNextCode || !pending.verifier || oauth.get('oauth_verifier') !== pending.verifier) {
            state.refuseNextCode = false;
            return text(401, 'invalid verifier');
          }
          const accessToken = opaque('', 32);
          const secret = opaque('', 16);
          accessTokens.set(accessToken, { secret, scope: (pending.scope ?? 'read').split(',') });
          state.accessTokens.push(accessToken);
          return form({ oauth_token: accessToken, oauth_token_secret: secret });
        },
      },
      {
        method: 'POST',
        host: 'api.trello.com',
        path: /^\/1\/boards\/?$/,
        handler: (req) => {
          const oauth = verified(req, (t) => accessTokens.get(t)?.secret);
          if (!oauth) return text(401, 'invalid token');
          if (!accessTokens.get(oauth.get('oauth_token')!)!.scope.includes('write')) return text(401, 'unauthorized permission requested');
          const name = req.query.get('name') ?? req.form.get('name');
          if (!name) return text(400, 'invalid value for name');
          return {
            status: 200,
            headers: { 'content-type': 'application/json; charset=utf-8' },
            body: JSON.stringify({
              id: '5abbe4b7ddc1b351ef961414',
              name,
              desc: '',
              closed: false,
              idOrganization: null,
              pinned: false,
              url: 'https://trello.com/b/Fqd4cBGF/latchkey-test',
              shortUrl: 'https://trello.com/b/Fqd4cBGF',
              prefs: { permissionLevel: 'private' },
            }),
          };
        },
      },
    ],
    e2e: {
      // Write access, which Trello grants only when the authorize URL carries scope=read,write.
      scopes: ['read', 'write'],
      expectConfig: {},
      api: { method: 'POST', path: '/1/boards/?name=Latchkey%20test', answer: { name: 'Latchkey test', closed: false } },
      refreshes: false,
      failure: 'refused-code',
    },
  };
}
