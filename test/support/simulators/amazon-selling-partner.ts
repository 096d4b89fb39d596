/**
 * Amazon Selling Partner API (SP-API), as its docs describe it:
 * - https://developer-docs.amazon.com/sp-api/docs/website-authorization-workflow and the Selling Partner API Developer
 *   Guide (https://github.com/amzn/selling-partner-api-docs/blob/main/guides/en-US/developer-guide/SellingPartnerApiDeveloperGuide.md,
 *   "Constructing an OAuth authorization URI", "Website authorization workflow"): the browser goes to the Seller
 *   Central URL of the marketplace + `/apps/authorize/consent` with `application_id` (the app's ID, not its LWA
 *   client ID), `state`, optionally `redirect_uri` (one of the app's OAuth Redirect URIs; else the first) and
 *   `version=beta` for a draft app; after the Confirm button Amazon loads the redirect URI with `state`,
 *   `selling_partner_id`, `mws_auth_token` (hybrid apps only) and `spapi_oauth_code` (an LWA authorization code,
 *   valid five minutes). Cancel "exits without authorizing": no redirect is documented.
 * - The LWA token endpoint (same guide, "Step 4. Your application exchanges the LWA authorization code", and
 *   "Step 1. Request a Login with Amazon access token"; https://developer.amazon.com/docs/login-with-amazon/authorization-code-grant.html):
 *   POST https://api.amazon.com/auth/o2/token, a form with `grant_type=authorization_code`, `code`, `redirect_uri`,
 *   `client_id`, `client_secret` (or HTTP Basic: the LWA page); the answer `access_token`, `token_type: "bearer"`,
 *   `expires_in: 3600`, `refresh_token`; a refresh (`grant_type=refresh_token`) answers the refresh token that was
 *   sent; errors are RFC 6749's (`invalid_grant`, `invalid_client`, ...; the LWA page's "Access Token Errors").
 * - https://developer-docs.amazon.com/sp-api/docs/connecting-to-the-selling-partner-api: the LWA access token in the
 *   `x-amz-access-token` header of every call, to https://sellingpartnerapi-{na,eu,fe}.amazon.com
 *   (https://developer-docs.amazon.com/sp-api/docs/sp-api-endpoints); no AWS signature since October 2023
 *   (https://developer-docs.amazon.com/sp-api/changelog/sp-api-will-no-longer-require-aws-iam-or-aws-signature-version-4).
 *   The guide's error answer: `{"errors": [{"message": "Access to requested resource is denied.", "code":
 *   "Unauthorized", "details": "Access token is missing in the request header."}]}` (400 in its example); the
 *   Sellers API's getMarketplaceParticipations (GET /sellers/v1/marketplaceParticipations) answers `{"payload":
 *   [{"marketplace": {...}, "participation": {...}}]}`, and 403 for an access token it refuses.
 * Silent: LWA's error words beyond their codes (the framework's RFC 6749 phrases); what an invalid `application_id`
 * shows (the simulator answers a plain 400 page); the `details` of a refused token (empty here).
 */
import {
  authServer,
  consentPage,
  json,
  oauthError,
  opaque,
  redirect,
  tokenEndpoint,
  type Handler,
  type ProviderSimulator,
  type SimAnswer,
} from './framework.js';

const SELLING_PARTNER_ID = 'A3FHEXAMPLEYWS';
const SELLER_CENTRAL = 'sellercentral-europe.amazon.com';

const PARTICIPATIONS = {
  payload: [
    {
      marketplace: {
        id: 'A1PA6795UKMFR9',
        countryCode: 'DE',
        name: 'Amazon.de',
        defaultCurrencyCode: 'EUR',
        defaultLanguageCode: 'de_DE',
        domainName: 'www.amazon.de',
      },
      participation: { isParticipating: true, hasSuspendedListings: false },
    },
  ],
};

const denied = (status: number, details: string): SimAnswer =>
  json(status, { errors: [{ message: 'Access to requested resource is denied.', code: 'Unauthorized', details }] });

export function amazonSellingPartner(): ProviderSimulator {
  const { state, grants } = authServer();
  // The LWA credentials of the app, and its SP-API application ID (a different value, given at authorization).
  const client = { clientId: opaque('amzn1.application-oa2-client.', 16), clientSecret: opaque('amzn1.oa2-cs.v1.', 24) };
  const applicationId = `amzn1.sp.solution.${opaque('', 16)}`;

  const consent: Handler = (req) => {
    const redirectUri = req.query.get('redirect_uri');
    // A published app: the consent URI names it by application_id; redirect_uri is one the app registered (Latchkey's callback).
    if (req.query.get('application_id') !== applicationId || !redirectUri)
      return { status: 400, headers: { 'content-type': 'text/plain' }, body: 'This application is not available.' };
    const code = grants.issueCode(
      { clientId: client.clientId, redirectUri, scope: '', extra: { selling_partner_id: SELLING_PARTNER_ID } },
      'ANDQ',
    );
    const back = redirect(redirectUri, {
      state: req.query.get('state') ?? '',
      selling_partner_id: SELLING_PARTNER_ID,
      spapi_oauth_code: code,
    }).headers!.location!;
    // Cancel leaves without a redirect (none is documented): back to Seller Central.
    return consentPage('Amazon Seller Central', back, `https://${SELLER_CENTRAL}/home`);
  };

  const token = tokenEndpoint({
    grants,
    client,
    auth: 'either',
    // LWA answers the refresh token that was sent (the guide's refresh answer).
    refresh: { rotate: false, returnsToken: true },
    accessPrefix: 'Atza|',
    refreshPrefix: 'Atzr|',
    answer: (t) =>
      json(200, {
        access_token: t.accessToken,
        token_type: 'bearer',
        expires_in: 3600,
        ...(t.refreshToken ? { refresh_token: t.refreshToken } : {}),
      }),
    error: oauthError(),
  });

  const participations: Handler = (req) => {
    const accessToken = req.headers['x-amz-access-token'];
    if (typeof accessToken !== 'string') return denied(400, 'Access token is missing in the request header.');
    return grants.validAccess(accessToken) ? json(200, PARTICIPATIONS) : denied(403, '');
  };

  return {
    manifest: 'amazon-selling-partner',
    hosts: [SELLER_CENTRAL, 'api.amazon.com', 'sellingpartnerapi-eu.amazon.com'],
    docs: [
      'https://developer-docs.amazon.com/sp-api/docs/website-authorization-workflow',
      'https://developer-docs.amazon.com/sp-api/docs/connecting-to-the-selling-partner-api',
      'https://developer.amazon.com/docs/login-with-amazon/authorization-code-grant.html',
    ],
    client,
    state,
    routes: [
      { method: 'GET', host: SELLER_CENTRAL, path: '/apps/authorize/consent', handler: consent },
      { method: 'POST', host: 'api.amazon.com', path: '/auth/o2/token', handler: token },
      { method: 'GET', host: 'sellingpartnerapi-eu.amazon.com', path: '/sellers/v1/marketplaceParticipations', handler: participations },
    ],
    e2e: {
      // A seller in Germany: Seller Central Europe, the Europe endpoint.
      typed: { sellerCentralHost: SELLER_CENTRAL, region: 'eu' },
      integration: { authorizationParams: { application_id: applicationId } },
      expectConfig: { sellerCentralHost: SELLER_CENTRAL, region: 'eu', sellingPartnerId: SELLING_PARTNER_ID },
      api: {
        method: 'GET',
        path: '/sellers/v1/marketplaceParticipations',
        answer: { payload: [{ marketplace: { id: 'A1PA6795UKMFR9' } }] },
      },
      refreshes: true,
      failure: 'refused-code',
    },
  };
}
