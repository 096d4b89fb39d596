/**
 * Stripe Connect (OAuth for Standard accounts), as its docs describe it:
 * - https://docs.stripe.com/connect/oauth-reference (GET https://connect.stripe.com/oauth/authorize with
 *   `response_type=code`, `client_id` (ca_...), `scope=read_write`, `redirect_uri`, `state`; the redirect back:
 *   `scope`, `code` (ac_...) and `state`, or `error=access_denied` and `error_description=The user denied your
 *   request`; POST https://connect.stripe.com/oauth/token with `grant_type`, `code` or `refresh_token`, and the
 *   platform's secret key as `client_secret` (or as the HTTP Basic user name); the answer: `access_token`,
 *   `livemode`, `refresh_token`, `token_type: "bearer"`, `stripe_publishable_key`, `stripe_user_id`, `scope`, no
 *   expiry; a bad code: 400 `{"error": "invalid_grant", "error_description": "Authorization code does not exist: ..."}`)
 * - https://docs.stripe.com/api/accounts/retrieve (GET /v1/account: the connected account; a bad key: 401
 *   `{"error": {"type": "invalid_request_error", "message": "Invalid API Key provided: ..."}}`)
 */
import type { PendingCode, ProviderSimulator, SimRequest } from './framework.js';
import { authServer, clientOf, consentPage, json, opaque, pendingFrom, redirect, route, withToken } from './framework.js';

const ACCOUNT_ID = 'acct_1032D82eZvKYlo2C';

export function stripeConnect(): ProviderSimulator {
  const { state, grants } = authServer();
  const client = { clientId: `ca_${opaque('', 16)}`, clientSecret: `sk_test_${opaque('', 24)}` };

  /** The platform's secret key: `client_secret`, or the Basic user name (empty password). */
  const platformKey = (req: SimRequest) => {
    const c = clientOf(req);
    return c.via === 'basic' ? c.clientId : req.form.get('client_secret');
  };
  const tokenAnswer = (grant: PendingCode) => {
    const { accessToken, refreshToken } = grants.issueTokens(grant, { accessPrefix: 'sk_test_', refreshPrefix: 'rt_', refresh: true });
    return json(200, {
      access_token: accessToken,
      livemode: false,
      refresh_token: refreshToken,
      token_type: 'bearer',
      stripe_publishable_key: `pk_test_${opaque('', 12)}`,
      stripe_user_id: ACCOUNT_ID,
      scope: 'read_write',
    });
  };

  return {
    manifest: 'stripe',
    hosts: ['connect.stripe.com', 'api.stripe.com'],
    docs: ['https://docs.stripe.com/connect/oauth-reference', 'https://docs.stripe.com/api/accounts/retrieve'],
    client,
    state,
    routes: [
      route('GET https://connect.stripe.com/oauth/authorize', (req) => {
        if (req.query.get('client_id') !== client.clientId)
          return json(400, { error: 'invalid_client', error_description: `No such application: '${req.query.get('client_id') ?? ''}'` });
        const redirectUri = req.query.get('redirect_uri')!;
        const st = req.query.get('state') ?? '';
        const scope = req.query.get('scope') ?? 'read_only';
        const code = grants.issueCode(pendingFrom(req), 'ac_');
        return consentPage(
          'Stripe',
          redirect(redirectUri, { scope, code, state: st }).headers!.location!,
          redirect(redirectUri, { error: 'access_denied', error_description: 'The user denied your request', state: st }).headers!
            .location!,
        );
      }),
      route('POST https://connect.stripe.com/oauth/token', (req) => {
        if (platformKey(req) !== client.clientSecret)
          return json(401, {
            error: 'invalid_client',
            error_description:
              'No authentication was provided. Send your secret API key using the Authorization header, or as a client_secret POST parameter.',
          });
        if (req.form.get('grant_type') === 'refresh_token') {
          const token = req.form.get('refresh_token');
          const grant = grants.takeRefresh(token, false);
          return grant
            ? tokenAnswer(grant)
            : json(400, { error: 'invalid_grant', error_description: `Refresh token does not exist: ${token ?? ''}` });
        }
        if (req.form.get('grant_type') !== 'authorization_code')
          return json(400, {
            error: 'unsupported_grant_type',
            error_description: 'Only authorization_code and refresh_token are supported',
          });
        const code = req.form.get('code');
        const grant = grants.takeCode(code);
        return grant
          ? tokenAnswer(grant)
          : json(400, { error: 'invalid_grant', error_description: `Authorization code does not exist: ${code ?? ''}` });
      }),
      route(
        'GET https://api.stripe.com/v1/account',
        withToken(grants, json(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided: sk_test_****' } }), () =>
          json(200, {
            id: ACCOUNT_ID,
            object: 'account',
            business_type: 'company',
            charges_enabled: true,
            country: 'US',
            default_currency: 'usd',
            details_submitted: true,
            email: 'site@stripe.com',
            payouts_enabled: true,
            type: 'standard',
          }),
        ),
      ),
    ],
    e2e: {
      // Nothing typed: the connected account comes back in the token answer (stripe_user_id).
      expectConfig: { accountId: ACCOUNT_ID },
      api: { method: 'GET', path: '/v1/account', answer: { id: ACCOUNT_ID, object: 'account' } },
      refreshes: true,
      failure: 'refused-code',
    },
  };
}
