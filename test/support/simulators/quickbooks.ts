/**
 * QuickBooks Online (Intuit), as its docs describe it:
 * - https://developer.intuit.com/app/developer/qbo/docs/develop/authentication-and-authorization/oauth-2.0
 *   (authorize at appcenter.intuit.com/connect/oauth2; the redirect back with `code`, `state` and `realmId` (the
 *   company ID), or `error=access_denied` and `state`; the token request at
 *   oauth.platform.intuit.com/oauth2/v1/tokens/bearer with HTTP Basic client authentication; the answer:
 *   `token_type: "bearer"`, `expires_in`, `refresh_token`, `x_refresh_token_expires_in`, `access_token`; a refresh
 *   answers the same fields (the refresh token may stay the same); errors as HTTP 400 `{"error": "invalid_grant"}`)
 * - https://developer.intuit.com/app/developer/qbo/docs/api/accounting/all-entities/companyinfo (the API call:
 *   `GET /v3/company/<realmID>/companyinfo/<realmID>` on quickbooks.api.intuit.com, `Accept: application/json`)
 * - https://developer.intuit.com/app/developer/qbo/docs/develop/troubleshooting/error-codes (401:
 *   `AuthenticationFailed`, errorCode 003200)
 */
import { apiRoute, json, oauth2Provider, opaque, type ProviderSimulator } from './framework.js';

const REALM_ID = '9130357766900456';

export function quickbooks(): ProviderSimulator {
  const client = { clientId: `AB${opaque('', 24)}`, clientSecret: opaque('', 20) };
  return oauth2Provider({
    manifest: 'quickbooks',
    docs: ['https://developer.intuit.com/app/developer/qbo/docs/develop/authentication-and-authorization/oauth-2.0'],
    client,
    authorize: {
      url: 'https://appcenter.intuit.com/connect/oauth2',
      provider: 'QuickBooks',
      extra: { realmId: REALM_ID },
    },
    token: {
      url: 'https://oauth.platform.intuit.com/oauth2/v1/tokens/bearer',
      auth: 'basic',
      refresh: { rotate: false, returnsToken: true },
      accessPrefix: 'eyJlbmMiOiJBMTI4Q0JDLUhTMjU2IiwiYWxnIjoiZGlyIn0..',
      refreshPrefix: 'AB11',
      answer: ({ accessToken, refreshToken }) =>
        json(200, {
          token_type: 'bearer',
          expires_in: 3600,
          refresh_token: refreshToken,
          x_refresh_token_expires_in: 8726400,
          access_token: accessToken,
        }),
      error: (code) => json(code === 'invalid_client' ? 401 : 400, { error: code }),
    },
    api: (grants) => [
      apiRoute(
        grants,
        { host: 'quickbooks.api.intuit.com', path: `/v3/company/${REALM_ID}/companyinfo/${REALM_ID}` },
        () =>
          json(401, {
            Fault: {
              Error: [{ Message: 'message=AuthenticationFailed; errorCode=003200; statusCode=401', code: '3200' }],
              type: 'AUTHENTICATION',
            },
            time: new Date().toISOString(),
          }),
        () =>
          json(200, {
            CompanyInfo: {
              CompanyName: "Larry's Bakery",
              LegalName: "Larry's Bakery",
              Country: 'US',
              Id: '1',
              SyncToken: '4',
              domain: 'QBO',
              sparse: false,
            },
            time: '2015-07-24T10:48:27.082-07:00',
          }),
      ),
    ],
    e2e: {
      // The company ID comes on the redirect: nothing typed.
      expectConfig: { realmId: REALM_ID },
      api: { method: 'GET', path: `/v3/company/${REALM_ID}/companyinfo/${REALM_ID}`, answer: { CompanyInfo: { Id: '1' } } },
      refreshes: true,
      failure: 'denied',
    },
  });
}
