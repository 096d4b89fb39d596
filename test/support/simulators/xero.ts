/**
 * Xero, as its docs describe it:
 * - https://developer.xero.com/documentation/guides/oauth2/auth-flow (authorize at
 *   login.xero.com/identity/connect/authorize; the redirect back with `code`, `scope` and `state`, or
 *   `error=access_denied` and `state`; the token request at identity.xero.com/connect/token with HTTP Basic client
 *   authentication; the answer: `id_token` (with openid), `access_token`, `expires_in: 1800`, `token_type:
 *   "Bearer"`, `refresh_token`, `scope`; refresh tokens rotate; errors as HTTP 400 `{"error": "invalid_grant"}`;
 *   the tenants: `GET https://api.xero.com/connections` answers a list of `{id, authEventId, tenantId, tenantType,
 *   tenantName, createdDateUtc, updatedDateUtc}`; API calls carry the `xero-tenant-id` header)
 * - https://developer.xero.com/documentation/api/accounting/organisation (the API call:
 *   `GET /api.xro/2.0/Organisation` on api.xero.com)
 * - https://developer.xero.com/documentation/guides/oauth2/troubleshooting (401: `{"Type", "Title": "Unauthorized",
 *   "Status": 401, "Detail": "AuthenticationUnsuccessful", "Instance", "Extensions"}`)
 */
import { randomUUID } from 'node:crypto';
import type { ProviderSimulator } from './framework.js';
import { apiRoute, bearerOf, e2eCase, json, oauth2Provider, opaque, opaqueClient, tokenAnswer } from './framework.js';

const TENANT_ID = '70784a63-d24b-46a9-a4db-0e70a274b056';

/** One organisation the user connected (`GET /connections` lists each as a tenant). */
export interface XeroTenant {
  tenantId: string;
  tenantName: string;
}
const MAPLE: XeroTenant = { tenantId: TENANT_ID, tenantName: 'Maple Florists' };
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

/** `tenants`: the organisations one authorization connects (default one). */
export function xero(tenants: XeroTenant[] = [MAPLE]): ProviderSimulator {
  const client = opaqueClient(opaque('', 16).toUpperCase(), 24);
  const unauthorized = () =>
    json(401, {
      Type: null,
      Title: 'Unauthorized',
      Status: 401,
      Detail: 'AuthenticationUnsuccessful',
      Instance: randomUUID(),
      Extensions: {},
    });
  const idToken = () =>
    `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64({ iss: 'https://identity.xero.com', aud: client.clientId, sub: randomUUID() })}.${opaque('', 32)}`;
  return oauth2Provider({
    manifest: 'xero',
    docs: ['https://developer.xero.com/documentation/guides/oauth2/auth-flow'],
    client,
    authorize: {
      url: 'https://login.xero.com/identity/connect/authorize',
      provider: 'Xero',
      extra: (req) => ({ scope: req.query.get('scope') ?? '' }),
    },
    token: {
      url: 'https://identity.xero.com/connect/token',
      auth: 'basic',
      refresh: { rotate: true },
      accessPrefix: 'eyJhbGciOiJSUzI1NiIsImtpZCI6IjFDQUY4RTY2NzcyRDZEQzAyOEQ2NzI2RkQwMjYxNTgxNTcwRUZDMTkiLCJ0eXAiOiJKV1QifQ.',
    },
    answer: tokenAnswer('id_token access_token expires_in token_type refresh_token scope', {
      // An ID token with openid in the scope (on the code grant).
      id_token: (i) => (i.kind === 'authorization_code' && i.scope.split(' ').includes('openid') ? idToken() : undefined),
      expires_in: 1800,
      token_type: 'Bearer',
    }),
    error: (code) => json(400, { error: code }),
    api: (grants) => [
      apiRoute(grants, { host: 'api.xero.com', path: '/connections' }, unauthorized, () =>
        json(
          200,
          tenants.map((t, i) => ({
            id: i === 0 ? 'e1eede29-f875-4a5d-8470-17f6a29a88b1' : randomUUID(),
            authEventId: 'd99ecdfe-391d-43d2-b834-17636ba90e8d',
            tenantId: t.tenantId,
            tenantType: 'ORGANISATION',
            tenantName: t.tenantName,
            createdDateUtc: '2019-07-09T23:40:30.1833130',
            updatedDateUtc: '2020-05-15T01:35:13.8491980',
          })),
        ),
      ),
      {
        method: 'GET',
        host: 'api.xero.com',
        path: '/api.xro/2.0/Organisation',
        handler: (req) => {
          if (!grants.validAccess(bearerOf(req))) return unauthorized();
          const tenant = tenants.find((t) => t.tenantId === req.headers['xero-tenant-id']);
          if (!tenant)
            return json(403, {
              Type: null,
              Title: 'Forbidden',
              Status: 403,
              Detail: 'AuthenticationUnsuccessful',
              Instance: randomUUID(),
              Extensions: {},
            });
          return json(200, {
            Id: randomUUID(),
            Status: 'OK',
            ProviderName: 'Latchkey',
            DateTimeUTC: '/Date(1589505313849)/',
            Organisations: [
              {
                OrganisationID: tenant.tenantId,
                Name: tenant.tenantName,
                LegalName: `${tenant.tenantName} Ltd`,
                BaseCurrency: 'NZD',
                CountryCode: 'NZ',
              },
            ],
          });
        },
      },
    ],
    e2e: e2eCase(
      'GET /api.xro/2.0/Organisation',
      { Status: 'OK', Organisations: [{ Name: 'Maple Florists' }] },
      {
        expectConfig: { tenantId: TENANT_ID },
        refreshes: true,
        failure: 'denied',
      },
    ),
  });
}
