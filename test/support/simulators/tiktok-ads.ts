/**
 * TikTok API for Business (Marketing API), as TikTok's official SDK describes it (github.com/tiktok/tiktok-business-api-sdk;
 * TikTok's own documentation pages were not in the material read):
 * - js_sdk/docs/AuthenticationApi.md and js_sdk/src/api/AuthenticationApi.js: POST
 *   https://business-api.tiktok.com/open_api/v1.3/oauth2/access_token/, Content-Type application/json, the body
 *   Oauth2AccessTokenBody `{app_id, auth_code, secret}` (all three required; auth_code "provided once the callback is
 *   complete"); the answer InlineResponse200.
 * - js_sdk/docs/InlineResponse200.md and js_sdk/src/ApiClient.js: every answer is `{code, message, request_id, data}`;
 *   the SDK takes `code === 0` as success and any other code as an error, whatever the HTTP status.
 * - js_sdk/docs/AccountManagementApi.md: GET /open_api/v1.3/advertiser/info/ with `advertiser_ids` and the token in
 *   the `Access-Token` header.
 * From third parties only (integrators' docs and public code): the consent page at /portal/auth taking `app_id`,
 * `state` and `redirect_uri`, and the redirect back with `auth_code` and `state`.
 * Silent: the fields of `data` beyond `access_token` (the simulator answers it alone), the error codes and their
 * messages (the simulator's own non-zero codes), the consent page's cancel (the e2e case provokes a refused code),
 * and the advertiser object (the simulator answers `data: {list: [{advertiser_id, name}]}` of its own).
 */
import {
  consentPage,
  json,
  opaque,
  authServer,
  type Handler,
  type ProviderSimulator,
  type SimAnswer,
  jsonObjectBody,
} from './framework.js';

const HOST = 'business-api.tiktok.com';
const ADVERTISER_ID = '7000000000000000001';

/** TikTok's envelope: `code` 0 and the data on success; the simulator's own codes and words on errors. */
const answer = (code: number, message: string, data: Record<string, unknown> = {}): SimAnswer =>
  json(200, { code, message, request_id: opaque('', 12), data });

export function tiktokAds(): ProviderSimulator {
  const { state, grants } = authServer();
  // A numeric App ID, and the app's secret (its "private key").
  const client = { clientId: `7${String(Date.now()).slice(-12)}123456`, clientSecret: opaque('', 20) };

  const consent: Handler = (req) => {
    const redirectUri = req.query.get('redirect_uri');
    if (req.query.get('app_id') !== client.clientId || !redirectUri)
      return { status: 400, headers: { 'content-type': 'text/plain' }, body: 'invalid authorization request' };
    const code = grants.issueCode({ clientId: client.clientId, redirectUri, scope: '', extra: {} });
    const back = new URL(redirectUri);
    back.searchParams.set('auth_code', code);
    back.searchParams.set('state', req.query.get('state') ?? '');
    return consentPage('TikTok for Business', back.href, `https://${HOST}/portal`);
  };

  const token: Handler = (req) => {
    const body = jsonObjectBody(req);
    if (!body) return answer(40002, 'simulator: expected a JSON body');
    if (body.app_id !== client.clientId || body.secret !== client.clientSecret)
      return answer(40001, 'simulator: app_id or secret not accepted');
    const grant = grants.takeCode(typeof body.auth_code === 'string' ? body.auth_code : null);
    if (!grant) return answer(40002, 'simulator: auth_code not accepted');
    const { accessToken } = grants.issueTokens(grant);
    return answer(0, 'OK', { access_token: accessToken });
  };

  const advertiserInfo: Handler = (req) => {
    const accessToken = req.headers['access-token'];
    if (typeof accessToken !== 'string' || !grants.validAccess(accessToken)) return answer(40105, 'simulator: access token not accepted');
    return answer(0, 'OK', { list: [{ advertiser_id: ADVERTISER_ID, name: 'Lumière Ads' }] });
  };

  return {
    manifest: 'tiktok-ads',
    hosts: [HOST],
    docs: [
      'https://github.com/tiktok/tiktok-business-api-sdk/blob/main/js_sdk/docs/AuthenticationApi.md',
      'https://github.com/tiktok/tiktok-business-api-sdk/blob/main/js_sdk/docs/InlineResponse200.md',
      'https://github.com/tiktok/tiktok-business-api-sdk/blob/main/js_sdk/docs/AccountManagementApi.md',
    ],
    client,
    state,
    routes: [
      { method: 'GET', host: HOST, path: '/portal/auth', handler: consent },
      { method: 'POST', host: HOST, path: '/open_api/v1.3/oauth2/access_token/', handler: token },
      { method: 'GET', host: HOST, path: '/open_api/v1.3/advertiser/info/', handler: advertiserInfo },
    ],
    e2e: {
      expectConfig: {},
      api: {
        method: 'GET',
        path: `/advertiser/info/?advertiser_ids=${encodeURIComponent(JSON.stringify([ADVERTISER_ID]))}`,
        answer: { code: 0, message: 'OK', data: { list: [{ advertiser_id: ADVERTISER_ID }] } },
      },
      // No refresh token in the answer: the long-term token is used as it is.
      refreshes: false,
      // The token endpoint refuses the code with a non-zero code in an HTTP 200 answer.
      failure: 'refused-code',
    },
  };
}
