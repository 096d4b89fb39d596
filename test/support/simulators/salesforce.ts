/**
 * Salesforce, as its docs describe it:
 * - https://help.salesforce.com/s/articleView?id=xcloud.remoteaccess_oauth_web_server_flow.htm (authorize at
 *   login.salesforce.com; the redirect back with `code` and `state`, or `error=access_denied` and
 *   `error_description=end-user denied authorization`; the token answer: `access_token`, `refresh_token` (with
 *   the `refresh_token` scope), `signature`, `scope`, `instance_url`, `id`, `token_type: "Bearer"`, `issued_at`
 *   as a string of milliseconds, no `expires_in`; errors as HTTP 400 `{"error", "error_description"}`)
 * - https://help.salesforce.com/s/articleView?id=xcloud.remoteaccess_oauth_refresh_token_flow.htm (the refresh
 *   answer: the same fields without a refresh token; the refresh token does not change)
 * - https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/dome_query.htm (the API call:
 *   `GET /services/data/vXX.X/query?q=...` on the instance; `totalSize`, `done`, `records`)
 * - https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/errorcodes.htm (401:
 *   `[{"message": "Session expired or invalid", "errorCode": "INVALID_SESSION_ID"}]`)
 */
import { createHash } from 'node:crypto';
import { bearerOf, e2eCase, json, oauth2Provider, opaque, opaqueClient, tokenAnswer, type ProviderSimulator } from './framework.js';

const INSTANCE = 'acme-dev-ed.my.salesforce.com';
const ORG_ID = '00DB0000000TfcRMAS';
const USER_ID = '005B0000005Bk90IAC';
const SF_JSON = 'application/json;charset=UTF-8';
const sfJson = (status: number, body: unknown) => json(status, body, SF_JSON);

export function salesforce(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'salesforce',
    docs: [
      'https://help.salesforce.com/s/articleView?id=xcloud.remoteaccess_oauth_web_server_flow.htm',
      'https://help.salesforce.com/s/articleView?id=xcloud.remoteaccess_oauth_refresh_token_flow.htm',
      'https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/dome_query.htm',
    ],
    client: opaqueClient(`3MVG9${opaque('', 20)}`, 32),
    authorize: {
      url: 'https://login.salesforce.com/services/oauth2/authorize',
      provider: 'Salesforce',
      denied: { error: 'access_denied', error_description: 'end-user denied authorization' },
      codePrefix: 'aPrx',
    },
    token: {
      url: 'https://login.salesforce.com/services/oauth2/token',
      auth: 'either',
      refresh: { rotate: false },
      accessPrefix: `${ORG_ID.slice(0, 15)}!`,
      refreshPrefix: '5Aep861',
    },
    // Web server flow answers carry the refresh token when the refresh_token scope was granted.
    answer: tokenAnswer(
      'access_token refresh_token signature scope instance_url id token_type issued_at',
      {
        signature: (i) => createHash('sha256').update(i.access).digest('base64'),
        instance_url: `https://${INSTANCE}`,
        id: `https://login.salesforce.com/id/${ORG_ID}/${USER_ID}`,
        token_type: 'Bearer',
        issued_at: () => String(Date.now()),
      },
      SF_JSON,
    ),
    error: (code, description) =>
      sfJson(400, {
        error: code === 'invalid_grant' ? 'invalid_grant' : code,
        error_description: code === 'invalid_grant' ? 'authentication failure' : description,
      }),
    api: (grants) => [
      {
        method: 'GET',
        host: '*.my.salesforce.com',
        path: /^\/services\/data\/v\d+\.\d\/query\/?$/,
        handler: (req) => {
          if (req.host !== INSTANCE || !grants.validAccess(bearerOf(req)))
            return sfJson(401, [{ message: 'Session expired or invalid', errorCode: 'INVALID_SESSION_ID' }]);
          return sfJson(200, {
            totalSize: 1,
            done: true,
            records: [
              {
                attributes: { type: 'Account', url: '/services/data/v62.0/sobjects/Account/001D000000IRFmaIAH' },
                Id: '001D000000IRFmaIAH',
                Name: 'Acme',
              },
            ],
          });
        },
      },
    ],
    e2e: e2eCase(
      'GET /services/data/v62.0/query?q=SELECT+Id,Name+FROM+Account',
      { totalSize: 1, done: true },
      {
        expectConfig: { instanceHost: INSTANCE },
        refreshes: true,
        failure: 'denied',
      },
    ),
  });
}
