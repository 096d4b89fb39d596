/**
 * The route table of ServiceAccount rights (src/http/access-table.ts): every REST route has its line
 * (a route without one is served to no ServiceAccount), and the rights read as a Role writes them.
 */
import { restRoutes } from '../../src/http/rest/routes/index.js';
import type { RestDeps } from '../../src/http/rest/routes/deps.js';
import { ROUTE_ACCESS, proxyAccess, routeAccess, tokenExchangeAccess } from '../../src/http/access-table.js';
import { refusal } from '../../src/auth/service-account-auth.js';
import { connectionObjectName } from '../../src/k8s/names.js';
import { testConfig } from '../support/config.js';

const input = (params: Record<string, unknown>, query: Record<string, unknown> = {}, body: unknown = undefined) => ({
  params,
  query,
  body,
  header: () => undefined,
});

it('has a line for every REST route and none for a route that does not exist', () => {
  // The route factories only keep their dependencies until a request comes.
  const routes = restRoutes({ config: testConfig([]) } as unknown as RestDeps);
  const ids = routes.map((r) => r.operationId).sort();
  expect(Object.keys(ROUTE_ACCESS).sort()).toEqual(ids);
});

it('asks for the credentials right on a fetch, by the Connection object name, or the Integration-wide one', () => {
  expect(routeAccess('getConnection', input({ connectionId: 'u-1' }, { provider_config_key: 'github' }))).toEqual([
    {
      anyOf: [
        { verb: 'get', resource: 'connections', subresource: 'credentials', name: connectionObjectName('github', 'u-1') },
        { verb: 'get', resource: 'integrations', subresource: 'connectioncredentials', name: 'github' },
      ],
    },
  ]);
  expect(tokenExchangeAccess('github', 'u-1')).toEqual(
    routeAccess('getConnection', input({ connectionId: 'u-1' }, { provider_config_key: 'github' })),
  );
  expect(proxyAccess('github', 'u-1')[0]!.anyOf.map((p) => `${p.verb} ${p.resource}/${p.subresource}`)).toEqual([
    'create connections/proxy',
    'create integrations/connectionproxy',
  ]);
});

it('lists with the namespace-wide right, or the Integration-wide one when filtered to one integration', () => {
  expect(routeAccess('listConnections', input({}, {}))).toEqual([{ anyOf: [{ verb: 'list', resource: 'connections' }] }]);
  expect(routeAccess('listConnections', input({}, { integrationId: 'a,b' }))).toEqual([
    { anyOf: [{ verb: 'list', resource: 'connections' }] },
  ]);
  expect(routeAccess('listConnections', input({}, { integrationId: 'a' }))[0]!.anyOf[1]).toEqual({
    verb: 'list',
    resource: 'integrations',
    subresource: 'connections',
    name: 'a',
  });
});

it('needs a right per connection for a bulk metadata update', () => {
  const checks = routeAccess('setMetadata', input({}, {}, { provider_config_key: 'crm', connection_id: ['a', 'b'] }));
  expect(checks.map((c) => c.anyOf[0]!.name)).toEqual([connectionObjectName('crm', 'a'), connectionObjectName('crm', 'b')]);
});

it('refuses a refresh token and a route without a line to every ServiceAccount', () => {
  expect(() => routeAccess('getConnection', input({ connectionId: 'u' }, { provider_config_key: 'g', refresh_token: true }))).toThrow(
    expect.objectContaining({ code: 'refresh_token_not_served', kind: 'forbidden' }),
  );
  expect(() => routeAccess('noSuchRoute', input({}))).toThrow(expect.objectContaining({ code: 'route_not_for_service_accounts' }));
});

it('words a refusal as kubectl auth can-i asks it', () => {
  const message = refusal('system:serviceaccount:apps:billing', 'tenant-a', proxyAccess('github', 'u-1')[0]!);
  const name = connectionObjectName('github', 'u-1');
  expect(message).toBe(
    `system:serviceaccount:apps:billing may not create connections/proxy "${name}" (or create integrations/connectionproxy "github") in namespace "tenant-a" (API group latchkey.dev); a Role bound in "tenant-a" that grants it allows this request. Ask: kubectl auth can-i create connections.latchkey.dev/${name} --subresource=proxy -n tenant-a --as=system:serviceaccount:apps:billing`,
  );
});
