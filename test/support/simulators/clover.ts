/**
 * Clover's v2/OAuth for high-trust apps, as its docs describe it (a provider whose token requests are JSON and
 * whose token answers give expiry times, not lifetimes):
 * - https://docs.clover.com/dev/docs/high-trust-app-auth-flow (GET /oauth/v2/authorize on the region's sign-in
 *   host, www.eu.clover.com in Europe, with `client_id` and `redirect_uri`; the merchant comes back to
 *   `redirect_uri` with `merchant_id`, `client_id` and `code`; POST /oauth/v2/token on the API host,
 *   api.eu.clover.com, a JSON body `{"client_id", "client_secret", "code"}`; the answer `{"access_token",
 *   "access_token_expiration", "refresh_token", "refresh_token_expiration"}`, expirations as Unix timestamps)
 * - https://docs.clover.com/build/oauth-2-0/ (`state` is included in the redirect back)
 * - https://docs.clover.com/dev/docs/refresh-access-tokens (POST /oauth/v2/refresh, a JSON body `{"client_id",
 *   "refresh_token"}`, answering a new pair in the same shape; a refresh token is single use)
 * - https://docs.clover.com/reference/ (the REST API on the region's API host: GET /v3/merchants/{mId})
 * Silent: the token endpoints' error answers and a refusal's words (the simulator's are its own, `{"message"}`
 * with 400/401), the consent page's deny (the e2e case provokes a refused code), fields beyond those listed
 * (ignored here: Latchkey's JSON also carries grant_type and redirect_uri), and the merchant object beyond `id`
 * and `name`.
 */
import { apiRoute, authorizePage, authServer, json, opaque, type Grants, type ProviderSimulator, jsonObjectBody } from './framework.js';

const MERCHANT = { id: 'MQ4EZ1N2V3X41', name: 'Café Lumière' };
const AUTHORIZE_HOST = 'www.eu.clover.com';
const API_HOST = 'api.eu.clover.com';
/** Token lifetimes the simulator gives (Clover's vary; the docs say not to assume one). */
const ACCESS_SECONDS = 1800;
const REFRESH_SECONDS = 365 * 24 * 3600;

export function clover(): ProviderSimulator & { expirations: number[] } {
  const { state, grants } = authServer();
  const client = { clientId: opaque('', 7).toUpperCase(), clientSecret: opaque('', 16) };
  /** Every access_token_expiration issued (Unix seconds), newest last. */
  const expirations: number[] = [];
  const refused = (status: number, message: string) => json(status, { message });

  const pair = (g: Grants, grant: Parameters<Grants['issueTokens']>[0]) => {
    const t = g.issueTokens(grant, { refresh: true });
    const now = Math.floor(Date.now() / 1000);
    expirations.push(now + ACCESS_SECONDS);
    return json(200, {
      access_token: t.accessToken,
      access_token_expiration: now + ACCESS_SECONDS,
      refresh_token: t.refreshToken,
      refresh_token_expiration: now + REFRESH_SECONDS,
    });
  };

  const consent = authorizePage('Clover', grants, client, {
    extra: { merchant_id: MERCHANT.id, client_id: client.clientId },
    invalid: () => refused(400, 'invalid authorization request'),
  });

  return {
    manifest: 'clover',
    hosts: [AUTHORIZE_HOST, API_HOST],
    docs: [
      'https://docs.clover.com/dev/docs/high-trust-app-auth-flow',
      'https://docs.clover.com/dev/docs/refresh-access-tokens',
      'https://docs.clover.com/reference/',
    ],
    client,
    state,
    expirations,
    routes: [
      { method: 'GET', host: AUTHORIZE_HOST, path: '/oauth/v2/authorize', handler: consent },
      {
        method: 'POST',
        host: API_HOST,
        path: '/oauth/v2/token',
        handler: (req) => {
          const body = jsonObjectBody(req);
          if (!body) return refused(400, 'expected a JSON body');
          if (body.client_id !== client.clientId || body.client_secret !== client.clientSecret) return refused(401, 'invalid client');
          const grant = grants.takeCode(typeof body.code === 'string' ? body.code : null);
          if (!grant) return refused(400, 'invalid authorization code');
          return pair(grants, grant);
        },
      },
      {
        method: 'POST',
        host: API_HOST,
        path: '/oauth/v2/refresh',
        handler: (req) => {
          const body = jsonObjectBody(req);
          if (!body) return refused(400, 'expected a JSON body');
          if (body.client_id !== client.clientId) return refused(401, 'invalid client');
          // Single use: the old refresh token stops working.
          const grant = grants.takeRefresh(typeof body.refresh_token === 'string' ? body.refresh_token : null, true);
          if (!grant) return refused(401, 'invalid refresh token');
          return pair(grants, grant);
        },
      },
      apiRoute(grants, { host: API_HOST, path: `/v3/merchants/${MERCHANT.id}` }, refused(401, 'Unauthorized'), () => json(200, MERCHANT)),
    ],
    e2e: {
      // The region: what the end user must know (the form's two hosts).
      typed: { authorizeHost: AUTHORIZE_HOST, apiHost: API_HOST },
      // The merchant comes back on the redirect.
      expectConfig: { authorizeHost: AUTHORIZE_HOST, apiHost: API_HOST, merchant_id: MERCHANT.id },
      api: { method: 'GET', path: `/v3/merchants/${MERCHANT.id}`, answer: { id: MERCHANT.id, name: MERCHANT.name } },
      refreshes: true,
      failure: 'refused-code',
      // The expiry stored is the answer's access_token_expiration, not a lifetime.
      credentials: () => ({ expires_at: new Date(expirations.at(-1)! * 1000).toISOString() }),
    },
  };
}
