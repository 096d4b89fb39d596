/**
 * The one table from Latchkey's routes to the RBAC rights a ServiceAccount needs for them
 * (kube-rbac-proxy's `resourceAttributes`, in the API group `latchkey.dev`, in the Environment's
 * namespace). docs/workloads.md shows it to users; the secret key needs none of it.
 *
 * - Connections are named by their object name (`resourceNames` in a Role: `kubectl get connections`
 *   shows it). A Role may instead grant the same right on every connection of one Integration, as a
 *   subresource of that Integration (`integrations/connections`, `integrations/connectioncredentials`,
 *   `integrations/connectionproxy`, named by the integration ID): a Connection's name is a slug and a
 *   hash, so no `resourceNames` list could say "every connection of github", and RBAC has no prefixes.
 *   The connection's right is asked first; the Integration's only when it is refused.
 * - `connections` without a subresource is the connection without its credentials: the very rights
 *   `kubectl` uses on the Connection objects (`get`/`list` read them, `delete` deletes the connection),
 *   so a Role means the same whichever way a workload goes.
 */
import { connectionObjectName } from '../k8s/names.js';
import type { AccessCheck, Permission } from '../auth/service-account-auth.js';
import { LatchkeyError } from '../domain/errors.js';

/** What a route's rights are computed from: its parsed path, query and body, and its headers. */
export interface AccessInput {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
  header(name: string): string | undefined;
}

type Verb = 'get' | 'list' | 'create' | 'update' | 'delete';
type ConnectionPart = 'connection' | 'credentials' | 'proxy';

/** The Integration-wide subresource standing for each part of a connection. */
const INTEGRATION_SUBRESOURCE: Record<ConnectionPart, string> = {
  connection: 'connections',
  credentials: 'connectioncredentials',
  proxy: 'connectionproxy',
};

/** A right on one connection (or on every connection of its Integration). */
export function onConnection(verb: Verb, part: ConnectionPart, integration: string, connectionId?: string): AccessCheck {
  const subresource = part === 'connection' ? undefined : part;
  const own: Permission = {
    verb,
    resource: 'connections',
    ...(subresource ? { subresource } : {}),
    ...(connectionId !== undefined ? { name: connectionObjectName(integration, connectionId) } : {}),
  };
  return { anyOf: [own, { verb, resource: 'integrations', subresource: INTEGRATION_SUBRESOURCE[part], name: integration }] };
}

const plain = (verb: Verb, resource: string, name?: string): AccessCheck => ({
  anyOf: [{ verb, resource, ...(name !== undefined ? { name } : {}) }],
});

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The rights of each REST route, by operationId (test/http/access-table.unit.test.ts: every route has its line). */
export const ROUTE_ACCESS: Record<string, (input: AccessInput) => AccessCheck[]> = {
  listProviders: () => [plain('list', 'providers')],
  getProvider: ({ params }) => [plain('get', 'providers', str(params.provider))],

  listIntegrations: () => [plain('list', 'integrations')],
  getIntegration: ({ params }) => [plain('get', 'integrations', str(params.uniqueKey))],
  createIntegration: () => [plain('create', 'integrations')],
  updateIntegration: ({ params }) => [plain('update', 'integrations', str(params.uniqueKey))],
  deleteIntegration: ({ params }) => [plain('delete', 'integrations', str(params.uniqueKey))],

  importConnection: ({ body }) => [importCheck(body)],
  importConnectionDeprecated: ({ body }) => [importCheck(body)],
  listConnections: ({ query }) => {
    const integrations = str(query.integrationId ?? query.provider_config_key)
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    // Filtered to one integration: that Integration's right also allows the list.
    if (integrations.length === 1)
      return [
        {
          anyOf: [
            { verb: 'list', resource: 'connections' },
            { verb: 'list', resource: 'integrations', subresource: 'connections', name: integrations[0]! },
          ],
        },
      ];
    return [plain('list', 'connections')];
  },
  // A fetch answers the credentials, refreshed first when due (a refresh on fetch needs no other right).
  getConnection: ({ params, query }) => {
    // A refresh token never leaves Latchkey for a workload: it would outlive any RoleBinding.
    if (query.refresh_token === true)
      throw new LatchkeyError(
        'forbidden',
        'refresh_token_not_served',
        'A refresh token is never answered to a ServiceAccount (refresh_token=true needs the secret key)',
      );
    return [onConnection('get', 'credentials', str(query.provider_config_key), str(params.connectionId))];
  },
  deleteConnection: ({ params, query }) => [onConnection('delete', 'connection', str(query.provider_config_key), str(params.connectionId))],

  setMetadata: ({ body }) => metadataChecks(body),
  updateMetadata: ({ body }) => metadataChecks(body),
  setConnectionMetadata: ({ params, query, header }) => [
    onConnection('update', 'connection', str(query.provider_config_key ?? header('provider-config-key')), str(params.connectionId)),
  ],
  updateConnectionMetadata: ({ params, query, header }) => [
    onConnection('update', 'connection', str(query.provider_config_key ?? header('provider-config-key')), str(params.connectionId)),
  ],

  createConnectSession: () => [plain('create', 'connectsessions')],
  createReconnectSession: () => [plain('create', 'connectsessions')],

  listLogs: () => [plain('list', 'operationlogs')],
  getLog: ({ params }) => [plain('get', 'operationlogs', str(params.logId))],
};

/** A proxied request: `create` on `connections/proxy` (the connection's, from the Nango headers). */
export function proxyAccess(integration: string, connectionId: string): AccessCheck[] {
  return [onConnection('create', 'proxy', integration, connectionId)];
}

/** A token exchange hands out the access token: the fetch's right. */
export function tokenExchangeAccess(integration: string, connectionId: string): AccessCheck[] {
  return [onConnection('get', 'credentials', integration, connectionId)];
}

function importCheck(body: unknown): AccessCheck {
  const b = body as { provider_config_key?: unknown; connection_id?: unknown };
  return onConnection(
    'create',
    'connection',
    str(b.provider_config_key),
    typeof b.connection_id === 'string' ? b.connection_id : undefined,
  );
}

function metadataChecks(body: unknown): AccessCheck[] {
  const b = body as { provider_config_key?: unknown; connection_id?: unknown };
  const ids = Array.isArray(b.connection_id) ? b.connection_id : [b.connection_id];
  return ids.map((id) => onConnection('update', 'connection', str(b.provider_config_key), str(id)));
}

/** The rights of a route for a ServiceAccount's request; a route missing from the table is served to none. */
export function routeAccess(operationId: string, input: AccessInput): AccessCheck[] {
  const rights = ROUTE_ACCESS[operationId];
  if (!rights) throw new LatchkeyError('forbidden', 'route_not_for_service_accounts', `${operationId} is served with the secret key only`);
  return rights(input);
}
