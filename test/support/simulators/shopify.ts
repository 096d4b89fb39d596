/**
 * Shopify (Admin API, authorization code grant, offline tokens), as its docs describe it:
 * - https://shopify.dev/docs/apps/build/authentication-authorization/access-tokens/authorization-code-grant
 *   (GET https://{shop}.myshopify.com/admin/oauth/authorize with `client_id`, `scope` (comma separated),
 *   `redirect_uri`, `state`; the redirect back: `code`, `hmac`, `host`, `shop`, `state`, `timestamp`, where `hmac`
 *   is the hex HMAC-SHA256, keyed with the client secret, of the other parameters sorted and joined as `k=v&...`;
 *   POST /admin/oauth/access_token with `client_id`, `client_secret`, `code`; the answer: `{"access_token",
 *   "scope"}` only; a used or unknown code: 400 `{"error": "invalid_request", "error_description": "The
 *   authorization code was not found or was already used"}`)
 * - https://shopify.dev/docs/apps/build/authentication-authorization/access-token-types/offline-access-tokens
 *   (offline tokens do not expire; no refresh token unless the app asks for expiring tokens)
 * - https://shopify.dev/docs/api/admin-rest/latest/resources/shop (GET /admin/api/{version}/shop.json with
 *   `X-Shopify-Access-Token`; a bad token: 401 `{"errors": "[API] Invalid API key or access token (unrecognized
 *   login or wrong password)"}`)
 */
import { createHmac } from 'node:crypto';
import { authServer, consentPage, json, opaque, paramsOf, pendingFrom, redirect, route, type ProviderSimulator } from './framework.js';

const SHOP = 'acme-outfitters';
const SHOP_DOMAIN = `${SHOP}.myshopify.com`;
const API_VERSION = '2025-07';

export function shopify(): ProviderSimulator {
  const { state, grants } = authServer();
  const client = { clientId: opaque('', 16), clientSecret: opaque('', 16) };

  /** The callback's query, signed as the docs describe (hmac over the sorted other parameters). */
  const signedCallback = (redirectUri: string, params: Record<string, string>) => {
    const message = Object.keys(params)
      .sort()
      .map((k) => `${k}=${params[k]}`)
      .join('&');
    const hmac = createHmac('sha256', client.clientSecret).update(message).digest('hex');
    return redirect(redirectUri, { ...params, hmac }).headers!.location!;
  };

  return {
    manifest: 'shopify',
    hosts: ['*.myshopify.com'],
    docs: [
      'https://shopify.dev/docs/apps/build/authentication-authorization/access-tokens/authorization-code-grant',
      'https://shopify.dev/docs/apps/build/authentication-authorization/access-token-types/offline-access-tokens',
      'https://shopify.dev/docs/api/admin-rest/latest/resources/shop',
    ],
    client,
    state,
    routes: [
      route('GET https://*.myshopify.com/admin/oauth/authorize', (req) => {
        if (req.host !== SHOP_DOMAIN)
          return { status: 404, headers: { 'content-type': 'text/html' }, body: '<h1>Sorry, this shop is currently unavailable.</h1>' };
        if (req.query.get('client_id') !== client.clientId)
          return {
            status: 400,
            headers: { 'content-type': 'text/html' },
            body: '<h1>Oauth error invalid_request: The client_id is invalid</h1>',
          };
        const redirectUri = req.query.get('redirect_uri')!;
        const st = req.query.get('state') ?? '';
        const code = grants.issueCode(pendingFrom(req));
        const timestamp = String(Math.floor(Date.now() / 1000));
        const host = Buffer.from(`admin.shopify.com/store/${SHOP}`).toString('base64url');
        return consentPage(
          'Shopify',
          signedCallback(redirectUri, { code, host, shop: SHOP_DOMAIN, state: st, timestamp }),
          // Cancelling the install returns the merchant to their admin: nothing reaches the app.
          `https://${SHOP_DOMAIN}/admin/apps`,
        );
      }),
      route('POST https://*.myshopify.com/admin/oauth/access_token', (req) => {
        // The access_token request takes JSON (the docs' example) or a form.
        const p = paramsOf(req);
        if (p.get('client_id') !== client.clientId || p.get('client_secret') !== client.clientSecret)
          return json(400, { error: 'invalid_client', error_description: 'Client credentials are invalid' });
        const grant = grants.takeCode(p.get('code'));
        if (!grant)
          return json(400, { error: 'invalid_request', error_description: 'The authorization code was not found or was already used' });
        const { accessToken } = grants.issueTokens(grant, { accessPrefix: 'shpua_' });
        return json(200, { access_token: accessToken, scope: grant.scope });
      }),
      {
        method: 'GET',
        host: '*.myshopify.com',
        path: `/admin/api/${API_VERSION}/shop.json`,
        handler: (req) => {
          const token = req.headers['x-shopify-access-token'];
          if (typeof token !== 'string' || !grants.validAccess(token))
            return json(401, { errors: '[API] Invalid API key or access token (unrecognized login or wrong password)' });
          return json(200, {
            shop: {
              id: 548380009,
              name: 'Acme Outfitters',
              email: 'owner@example.com',
              domain: 'shop.example.com',
              myshopify_domain: SHOP_DOMAIN,
              currency: 'USD',
              iana_timezone: 'America/New_York',
              plan_name: 'basic',
            },
          });
        },
      },
    ],
    e2e: {
      // The shop name is the one value the merchant knows and types (the authorize URL is on their shop).
      typed: { shop: SHOP },
      expectConfig: { shop: SHOP },
      api: { method: 'GET', path: `/admin/api/${API_VERSION}/shop.json`, answer: { shop: { myshopify_domain: SHOP_DOMAIN } } },
      refreshes: false,
      failure: 'refused-code',
    },
  };
}
