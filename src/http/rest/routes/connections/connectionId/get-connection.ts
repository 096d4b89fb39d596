/**
 * `GET /connections/{connectionId}`: the connection with fresh credentials (refreshed first when
 * due or forced). The process's hot path: src/http/hot-routes.ts runs this same route before express.
 */
import type { z } from 'zod';
import { RefreshError, UNKNOWN_CONNECTION } from '../../../../../auth/refresh/token-refresher.js';
import { unknownConnection } from '../../../../../connections/errors.js';
import { hasCode } from '../../../../../domain/errors.js';
import type { ProviderResource } from '../../../../../k8s/resources.js';
import type { StoredConnection } from '../../../../../k8s/store.js';
import { moduleOfCredentials } from '../../../../../modes/registry.js';
import { Connection, ConnectionParams, GetConnectionQuery } from '../../../schemas/connections.js';
import { connectionAnswer, fetchTimeOf } from '../../connection-view.js';
import { defineRoute, type RouteResult, type RouteSpec } from '../../define.js';
import { integrationAndProvider, type RestDeps } from '../../deps.js';
import { refreshFailure } from '../refresh-failure.js';

export function getConnection(deps: RestDeps): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/connections/:connectionId',
    operationId: 'getConnection',
    tag: 'Connections',
    summary: 'Get a connection with fresh credentials',
    description:
      'An expired or about-to-expire access token is refreshed before answering (once cluster-wide however many requests ask). 424 `reauthorization_required`: the provider rejected the grant, the end user must reconnect. 502/503 `provider_unavailable`: the provider failed or timed out, retry later (Retry-After when known); the stored credentials are unchanged.',
    params: ConnectionParams,
    query: GetConnectionQuery,
    responses: { 200: { description: 'The connection', schema: Connection } },
    errors: [400, 401, 404, 424, 502, 503],
    handle({ params, query, env }) {
      const { provider } = integrationAndProvider(deps, env.namespace, query.provider_config_key);
      // In memory, nothing due, not forced (nearly every fetch): answered now, without a promise or an API call.
      const kept = query.force_refresh
        ? undefined
        : deps.refresher.freshInMemory(env.namespace, query.provider_config_key, params.connectionId);
      if (kept && !(appJwtAsked(query) && refreshesOnAppJwt(kept))) return fetchAnswer(deps, provider, env.namespace, kept, query);
      return freshConnection(deps, env.namespace, params.connectionId, query).then((conn) =>
        fetchAnswer(deps, provider, env.namespace, conn, query),
      );
    },
  });
}

type FetchQuery = z.infer<typeof GetConnectionQuery>;

const appJwtAsked = (query: FetchQuery) => query.refresh_codehost_app_jwt_token ?? query.refresh_github_app_jwt_token ?? false;
const refreshesOnAppJwt = (conn: StoredConnection) => moduleOfCredentials(conn.credentials)?.refreshOnAppJwtRequest === true;

/** The fetch's connection when memory cannot answer: read, refreshed when due or forced (an app JWT asked for forces it where the mode says so). */
async function freshConnection(deps: RestDeps, namespace: string, connectionId: string, query: FetchQuery): Promise<StoredConnection> {
  const integration = query.provider_config_key;
  let force = query.force_refresh ?? false;
  if (appJwtAsked(query) && !force) {
    // Looked up here only when the answer depends on it: the refresher reads it anyway (and answers an unknown one).
    const existing =
      deps.connections.getConnection(namespace, integration, connectionId) ??
      (await deps.connections.findConnection(namespace, integration, connectionId));
    if (!existing) throw unknownConnection(connectionId, integration);
    force = refreshesOnAppJwt(existing);
  }
  try {
    return await deps.refresher.ensureFresh(namespace, integration, connectionId, { force, reason: 'fetch' });
  } catch (err) {
    if (hasCode(err, UNKNOWN_CONNECTION)) throw unknownConnection(connectionId, integration);
    if (err instanceof RefreshError) throw refreshFailure(err);
    throw err;
  }
}

/** The fetch's answer: the kept JSON text with the fetch time put in, which is recorded (in memory) for `last_fetched_at`. */
function fetchAnswer(
  deps: RestDeps,
  provider: ProviderResource,
  namespace: string,
  conn: StoredConnection,
  query: FetchQuery,
): RouteResult {
  const now = deps.clock.now();
  // SIGNATURE: a value computed for this answer (never stored), for callers that call the provider themselves.
  const perUse = moduleOfCredentials(conn.credentials)?.proxy.perUse;
  if (perUse) conn = { ...conn, credentials: perUse(provider.spec, conn.credentials, now) };
  // Memory only: written later in a batch (src/connections/last-fetched.ts).
  deps.lastFetched.record(namespace, conn.resource.metadata.name, now);
  return {
    status: 200,
    body: undefined,
    json: connectionAnswer(conn, { includeRefreshToken: query.refresh_token ?? false, lastFetchedAt: fetchTimeOf(now) }),
  };
}
