/**
 * DocuSign eSignature (production account server), as its docs describe it:
 * - https://developers.docusign.com/platform/auth/confidential-authcode-get-token/ (GET /oauth/auth with
 *   `response_type=code`, `scope`, `client_id`, `redirect_uri`, `state`; the redirect back: `code` and `state`, or
 *   `error=access_denied` and `error_message` when the user declines)
 * - https://developers.docusign.com/platform/auth/reference/obtain-access-token/ (POST /oauth/token, HTTP Basic with
 *   the integration key and secret, a form; the answer: `access_token`, `token_type: "Bearer"`, `refresh_token`,
 *   `expires_in: 28800`; a refresh answers the same shape; a bad code: 400 `{"error": "invalid_grant"}`)
 * - https://developers.docusign.com/platform/auth/reference/user-info/ (GET /oauth/userinfo: `sub`, `name`, `email`,
 *   `accounts[]` with `account_id`, `is_default`, `account_name`, `base_uri`; use the account whose `is_default` is true)
 * - https://developers.docusign.com/docs/esign-rest-api/reference/accounts/accounts/get/ (GET
 *   {base_uri}/restapi/v2.1/accounts/{accountId}; a bad token: 401 `{"errorCode": "USER_AUTHENTICATION_FAILED", ...}`)
 */
import { e2eCase, getRoute, json, oauth2Provider, oauthErrors, opaque, tokenAnswer, type ProviderSimulator } from './framework.js';

// The simulated user has two accounts, the default one listed second (the docs: pick is_default, not the first).
const OTHER_ACCOUNT = { account_id: '0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e', base_uri: 'https://eu.docusign.net', name: 'Old team' };
const DEFAULT_ACCOUNT = { account_id: 'a4ec37d6-04f2-4b5e-9c1a-143885c2e5b1', base_uri: 'https://na3.docusign.net', name: 'Acme Legal' };

export function docusign(): ProviderSimulator {
  const unauthorized = () =>
    json(401, {
      errorCode: 'USER_AUTHENTICATION_FAILED',
      message: 'One or both of Username and Password are invalid. Invalid access token',
    });

  return oauth2Provider({
    manifest: 'docusign',
    docs: [
      'https://developers.docusign.com/platform/auth/confidential-authcode-get-token/',
      'https://developers.docusign.com/platform/auth/reference/obtain-access-token/',
      'https://developers.docusign.com/platform/auth/reference/user-info/',
      'https://developers.docusign.com/docs/esign-rest-api/reference/accounts/accounts/get/',
    ],
    client: { clientId: '7c2b8d7e-1a2b-4c3d-9e8f-cda8a50dd73f', clientSecret: 'd7014634-5b6c-4d7e-8f9a-6842b7aa8861' },
    authorize: {
      url: 'https://account.docusign.com/oauth/auth',
      provider: 'DocuSign',
      codePrefix: 'eyJ0eXAiOiJNVCIs',
      invalid: () => json(400, { error: 'invalid_request', error_description: 'client_id' }),
      denied: { error: 'access_denied', error_message: 'The user did not consent to connecting the application.' },
    },
    token: {
      url: 'https://account.docusign.com/oauth/token',
      auth: 'basic',
      accessPrefix: 'eyJ0eXAiOiJNVCIs',
      refreshPrefix: 'eyJ0eXAiOiJNVCIs',
      // A refresh answers a refresh token too; the old one stays valid.
      refresh: { rotate: false, returnsToken: true },
    },
    answer: tokenAnswer('access_token token_type refresh_token expires_in', { token_type: 'Bearer', expires_in: 28800 }),
    error: oauthErrors({}),
    api: [
      getRoute(
        'https://account.docusign.com/oauth/userinfo',
        () => json(401, { error: 'internal_server_error', reference_id: opaque('', 8) }),
        () => {
          const account = (a: typeof DEFAULT_ACCOUNT, isDefault: boolean) => ({
            account_id: a.account_id,
            is_default: isDefault,
            account_name: a.name,
            base_uri: a.base_uri,
          });
          return json(200, {
            sub: '4799e5e9-1559-4915-9862-cf4713bbcacc',
            name: 'Susan Smart',
            given_name: 'Susan',
            family_name: 'Smart',
            created: '2015-08-13T22:03:03.45',
            email: 'susan.smart@example.com',
            accounts: [account(OTHER_ACCOUNT, false), account(DEFAULT_ACCOUNT, true)],
          });
        },
      ),
      ...[DEFAULT_ACCOUNT, OTHER_ACCOUNT].map((a) =>
        getRoute(
          `${a.base_uri}/restapi/v2.1/accounts/${a.account_id}`,
          unauthorized,
          json(200, {
            accountIdGuid: a.account_id,
            accountName: a.name,
            currentPlanId: 'f2de9c8c-7b6a-4e5d-9c3b-2a1f0e9d8c7b',
            planName: 'DEVCENTER_DEMO_APRIL2013',
            isDowngrade: 'false',
            billingPeriodStartDate: '2024-01-01T08:00:00.0000000Z',
          }),
        ),
      ),
    ],
    // Nothing typed: the account and its API host come from /oauth/userinfo (the default account).
    e2e: e2eCase(
      `GET /restapi/v2.1/accounts/${DEFAULT_ACCOUNT.account_id}`,
      { accountIdGuid: DEFAULT_ACCOUNT.account_id, accountName: DEFAULT_ACCOUNT.name },
      { expectConfig: { baseUriHost: 'na3.docusign.net', accountId: DEFAULT_ACCOUNT.account_id }, refreshes: true, failure: 'denied' },
    ),
  });
}
