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
import { e2eCase, getRoute, json, oauth2Provider, opaque, opaqueClient, tokenAnswer, type ProviderSimulator } from './framework.js';

const REALM_ID = '9130357766900456';

export function quickbooks(): ProviderSimulator {
  return oauth2Provider({
    manifest: 'quickbooks',
    docs: ['https://developer.intuit.com/app/developer/qbo/docs/develop/authentication-and-authorization/oauth-2.0'],
    client: opaqueClient(`AB${opaque('', 24)}`, 20),
    authorize: { url: 'https://appcenter.intuit.com/connect/oauth2', provider: 'QuickBooks', extra: { realmId: REALM_ID } },
    token: {
      url: 'https://oauth.platform.intuit.com/oauth2/v1/tokens/bearer',
      auth: 'basic',
      refresh: { rotate: false, returnsToken: true },
      accessPrefix: 'eyJlbmMiOiJBMTI4Q0JDLUhTMjU2IiwiYWxnIjoiZGlyIn0..',
      refreshPrefix: 'AB11',
    },
    answer: tokenAnswer('token_type expires_in refresh_token x_refresh_token_expires_in access_token', {
      token_type: 'bearer',
      expires_in: 3600,
      x_refresh_token_expires_in: 8726400,
    }),
    error: (code) => json(code === 'invalid_client' ? 401 : 400, { error: code }),
    api: [
      getRoute(
        `https://quickbooks.api.intuit.com/v3/company/${REALM_ID}/companyinfo/${REALM_ID}`,
        () =>
          json(401, {
            Fault: {
              Error: [{ Message: 'message=AuthenticationFailed; errorCode=003200; statusCode=401', code: '3200' }],
              type: 'AUTHENTICATION',
            },
            time: new Date().toISOString(),
          }),
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
    // The company ID comes on the redirect: nothing typed.
    e2e: e2eCase(
      `GET /v3/company/${REALM_ID}/companyinfo/${REALM_ID}`,
      { CompanyInfo: { Id: '1' } },
      {
        expectConfig: { realmId: REALM_ID },
        refreshes: true,
        failure: 'denied',
      },
    ),
  });
}
