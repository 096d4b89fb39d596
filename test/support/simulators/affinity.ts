/**
 * Affinity API v1 on api.affinity.co, as its docs describe it:
 * - HTTP Basic with no user name and the API key as the password: `curl "https://api.affinity.co/api_endpoint" -u :$APIKEY`
 *   (https://api-docs.affinity.co/#authentication), so `Basic base64(":" + key)`; the same page shows `Authorization: Bearer <key>`
 *   too, which it also accepts (Latchkey sends the Basic form).
 * - GET /auth/whoami answers the key's tenant, user and grant (https://api-docs.affinity.co/#the-whoami-resource).
 * Any other Authorization is answered 401 without a body (the docs found give no error body to copy).
 * Not an OAuth provider: there is no client, and `apiKey` is the key its settings page would have issued.
 */
import { json, newState, opaque, route, type ServedSimulator, type SimRequest } from './framework.js';

export interface AffinitySimulator extends ServedSimulator {
  apiKey: string;
}

export function affinity(): AffinitySimulator {
  const state = newState();
  const apiKey = opaque('', 24);
  const documented = `Basic ${Buffer.from(`:${apiKey}`, 'utf8').toString('base64')}`;
  const keyed = (req: SimRequest) => req.headers.authorization === documented || req.headers.authorization === `Bearer ${apiKey}`;
  return {
    manifest: 'affinity',
    hosts: ['api.affinity.co'],
    docs: ['https://api-docs.affinity.co/#authentication', 'https://api-docs.affinity.co/#the-whoami-resource'],
    client: { clientId: '', clientSecret: '' },
    state,
    apiKey,
    routes: [
      route('GET https://api.affinity.co/auth/whoami', (req) =>
        keyed(req)
          ? json(200, {
              tenant: { id: 1, name: 'Contoso Ltd.', subdomain: 'contoso' },
              user: { id: 1, firstName: 'John', lastName: 'Smith', email: 'john.smith@contoso.com' },
              grant: { type: 'api_key', scope: 'external_api', createdAt: '2023-01-01T00:00:00Z' },
            })
          : { status: 401 },
      ),
    ],
  };
}
