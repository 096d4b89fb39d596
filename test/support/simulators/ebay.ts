/**
 * eBay, as its docs describe it:
 * - https://developer.ebay.com/api-docs/static/oauth-redirect-uri.html: the OAuth flow's redirect_uri is not a URL
 *   but the app's RuName (eBay Redirect URL name), which holds the auth accepted and declined URLs.
 * - https://developer.ebay.com/api-docs/static/oauth-consent-request.html: GET https://auth.ebay.com/oauth2/authorize
 *   with `client_id`, `redirect_uri` (the RuName), `response_type=code`, `scope` (space separated), `state`
 *   (optional), `locale` and `prompt` (optional); after consent eBay loads the RuName's auth accepted URL with
 *   `state` and `code` (and the code's `expires_in`).
 * - https://developer.ebay.com/api-docs/static/oauth-auth-code-grant-request.html: POST
 *   https://api.ebay.com/identity/v1/oauth2/token, `Authorization: Basic <base64 client_id:client_secret>`, a form
 *   with `grant_type=authorization_code`, `code` and `redirect_uri` (the RuName again); the answer `access_token`,
 *   `expires_in: 7200`, `refresh_token`, `refresh_token_expires_in`, `token_type: "User Access Token"`.
 * - https://developer.ebay.com/api-docs/static/oauth-refresh-token-request.html: `grant_type=refresh_token` at the
 *   same endpoint; the answer `access_token`, `expires_in`, `token_type` (the refresh token is kept).
 * - https://developer.ebay.com/api-docs/sell/account/resources/privilege/methods/getPrivileges and
 *   https://developer.ebay.com/api-docs/sell/static/seller-accounts/ht_get-selling-limits.html: GET
 *   https://api.ebay.com/sell/account/v1/privilege answers `{"sellingLimit": {"amount": {"value", "currency"},
 *   "quantity"}, "sellerRegistrationCompleted": true}`, with a token of the sell.account(.readonly) scope.
 * - https://developer.ebay.com/develop/api/sell/error_codes: the errors container (`errorId`, `domain`, `category`,
 *   `message`, `longMessage`); 400 1002 "Missing access token".
 * Silent (in the pages read): what the auth declined URL receives (the test provokes a refused code instead), the
 * token endpoint's error words (RFC 6749 codes with the framework's phrases), the 401 of an invalid token (the
 * simulator answers with errorId 1001, "Invalid access token").
 */
import {
  e2eCase,
  json,
  oauth2Provider,
  oauthError,
  opaque,
  route,
  tokenAnswer,
  type Handler,
  type ProviderSimulator,
} from './framework.js';

const SCOPE = 'https://api.ebay.com/oauth/api_scope/sell.account.readonly';
const PRIVILEGES = { sellingLimit: { amount: { value: '100.0', currency: 'USD' }, quantity: 10 }, sellerRegistrationCompleted: true };

export function ebay(): ProviderSimulator {
  const client = { clientId: `Acme-AcmeApp-PRD-${opaque('', 8)}`, clientSecret: `PRD-${opaque('', 12)}` };
  // The app's RuName, and the auth accepted URL registered under it (Latchkey's callback, known when the test starts).
  const ruName = `Acme_Inc-AcmeInc-AcmeAp-${opaque('', 4)}`;
  let acceptedUrl: string | undefined;

  /** eBay resolves the RuName to its accepted URL: the consent page takes only the RuName, and redirects to that URL. */
  const byRuName =
    (usual: Handler): Handler =>
    (req) => {
      if (req.query.get('redirect_uri') !== ruName || !acceptedUrl)
        return { status: 400, headers: { 'content-type': 'text/plain' }, body: 'invalid redirect_uri' };
      const query = new URLSearchParams(req.query);
      query.set('redirect_uri', acceptedUrl);
      return usual({ ...req, query });
    };
  /** The token request names the RuName too; any other redirect_uri (the accepted URL itself included) does not match. */
  const tokenByRuName =
    (usual: Handler): Handler =>
    (req) => {
      const form = new URLSearchParams(req.form);
      if (form.has('redirect_uri')) form.set('redirect_uri', form.get('redirect_uri') === ruName ? (acceptedUrl ?? '') : '');
      return usual({ ...req, form });
    };

  const sim = oauth2Provider({
    manifest: 'ebay',
    docs: [
      'https://developer.ebay.com/api-docs/static/oauth-redirect-uri.html',
      'https://developer.ebay.com/api-docs/static/oauth-consent-request.html',
      'https://developer.ebay.com/api-docs/static/oauth-auth-code-grant-request.html',
      'https://developer.ebay.com/api-docs/static/oauth-refresh-token-request.html',
    ],
    client,
    authorize: {
      url: 'https://auth.ebay.com/oauth2/authorize',
      provider: 'eBay',
      // The RuName stands for the redirect URI; the redirect back is to its accepted URL (above).
      wrap: byRuName,
      extra: { expires_in: '299' },
    },
    token: {
      url: 'https://api.ebay.com/identity/v1/oauth2/token',
      wrap: tokenByRuName,
      auth: 'basic',
      refresh: { rotate: false },
      accessPrefix: 'v^1.1#i^1#p^3#r^1#',
      refreshPrefix: 'v^1.1#i^1#p^3#r^1#',
    },
    // The refresh token and its lifetime in the code grant's answer only: a refresh keeps the refresh token.
    answer: tokenAnswer('access_token expires_in refresh_token refresh_token_expires_in token_type', {
      expires_in: 7200,
      refresh_token: (i) => (i.kind === 'authorization_code' ? i.refresh : undefined),
      refresh_token_expires_in: (i) => (i.kind === 'authorization_code' && i.refresh ? 47304000 : undefined),
      token_type: 'User Access Token',
    }),
    error: oauthError(),
    api: (grants) => [
      route('GET https://api.ebay.com/sell/account/v1/privilege', (req) => {
        const auth = req.headers.authorization;
        if (!auth)
          return json(400, {
            errors: [
              {
                errorId: 1002,
                domain: 'OAuth',
                category: 'REQUEST',
                message: 'Missing access token',
                longMessage: 'Access token is missing in the Authorization HTTP request header.',
              },
            ],
          });
        return grants.validAccess(auth.replace(/^Bearer /, ''))
          ? json(200, PRIVILEGES)
          : json(401, { errors: [{ errorId: 1001, domain: 'OAuth', category: 'REQUEST', message: 'Invalid access token' }] });
      }),
    ],
    e2e: e2eCase(
      'GET /sell/account/v1/privilege',
      { sellerRegistrationCompleted: true },
      {
        scopes: [SCOPE],
        integration: { redirectUriName: ruName },
        registerCallback: (url) => {
          acceptedUrl = url;
        },
        refreshes: true,
        failure: 'refused-code',
      },
    ),
  });
  return sim;
}
