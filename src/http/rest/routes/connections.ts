import { ConnectionNotFoundError, RefreshError } from '../../../auth/refresh/token-refresher.js';
import { importCredentials } from '../../../connections/import.js';
import { listConnections } from '../../../connections/list.js';
import { deleteConnection } from '../../../connections/service.js';
import type { RevocationOutcome } from '../../../auth/grant-revocation.js';
import { moduleOfCredentials } from '../../../modes/registry.js';
import { LatchkeyError } from '../../../domain/errors.js';
import type { EndUserSpec, ProviderResource } from '../../../k8s/resources.js';
import type { StoredConnection } from '../../../k8s/store.js';
import type { EndUserInput } from '../schemas/common.js';
import {
  Connection,
  ConnectionParams,
  ConnectionsList,
  DeleteResponse,
  DeprecatedImportBody,
  GetConnectionQuery,
  ImportConnectionBody,
  IntegrationQuery,
  ListConnectionsQuery,
} from '../schemas/connections.js';
import { connectionAnswer, connectionSummary, connectionView, fetchTimeOf } from './connection-view.js';
import { defineRoute, type RouteResult, type RouteSpec } from './define.js';
import { integrationAndProvider, type RestDeps } from './deps.js';
import type { z } from 'zod';

export function connectionRoutes(deps: RestDeps): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/connections',
      operationId: 'importConnection',
      tag: 'Connections',
      summary: 'Import existing credentials as a connection',
      description:
        "Creates the connection, or replaces the credentials of an existing connection ID (its metadata and configuration are kept; keys sent here are merged in). `credentials.type` must match the provider's auth mode.",
      body: ImportConnectionBody,
      responses: {
        201: { description: 'Connection created', schema: Connection },
        200: { description: 'Credentials of the existing connection replaced', schema: Connection },
      },
      errors: [400, 401, 404, 413, 503],
      async handle({ body, env }) {
        const { integration, provider } = integrationAndProvider(deps, env.namespace, body.provider_config_key);
        const { connection, created } = await importCredentials(deps, {
          namespace: env.namespace,
          integration,
          provider,
          connectionId: body.connection_id,
          credentials: { given: body.credentials },
          metadata: body.metadata,
          connectionConfig: body.connection_config,
          endUser: endUserSpec(body.end_user, body.tags),
        });
        logImport(deps, connection, created);
        return { status: created ? 201 : 200, body: connectionView(connection) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/connection',
      operationId: 'importConnectionDeprecated',
      tag: 'Connections',
      deprecated: true,
      summary: 'Import existing credentials (deprecated: use POST /connections)',
      description:
        "Flat fields interpreted by the provider's auth mode. OAuth 2 needs `expires_at` (preferred), `expires_in`, or `no_expiration: true`.",
      body: DeprecatedImportBody,
      responses: {
        201: { description: 'Connection created', schema: EmptyObject(), headers: { Deprecation: 'RFC 9745 deprecation date' } },
        200: {
          description: 'Credentials of the existing connection replaced',
          schema: EmptyObject(),
          headers: { Deprecation: 'RFC 9745 deprecation date' },
        },
      },
      errors: [400, 401, 404, 413],
      async handle({ body, env }) {
        const { integration, provider } = integrationAndProvider(deps, env.namespace, body.provider_config_key);
        const { provider_config_key: _key, connection_id, metadata, connection_config, end_user, ...flat } = body;
        const { connection, created } = await importCredentials(deps, {
          namespace: env.namespace,
          integration,
          provider,
          connectionId: connection_id,
          credentials: { flat },
          metadata,
          connectionConfig: connection_config,
          endUser: endUserSpec(end_user),
        });
        logImport(deps, connection, created);
        return { status: created ? 201 : 200, body: {}, headers: DEPRECATION_HEADERS };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/connections',
      operationId: 'listConnections',
      tag: 'Connections',
      summary: 'List connections (without credentials)',
      description:
        'Filters combine with AND. Sorted by creation time; page with `limit` and `cursor` (or `offset` / `page`; 100 per page by default). Without any of them, up to 10,000 connections in one answer, as Nango does.',
      query: ListConnectionsQuery,
      responses: { 200: { description: 'A page of connections', schema: ConnectionsList } },
      errors: [400, 401],
      async handle({ query, rawQuery, env }) {
        const { connections, nextCursor } = await listConnections(
          deps.connectionScans,
          env.namespace,
          {
            connectionId: query.connectionId,
            integrations: (query.integrationId ?? query.provider_config_key)
              ?.split(',')
              .map((s) => s.trim())
              .filter(Boolean),
            endUserId: query.endUserId ?? query.end_user_id,
            endUserEmail: query.endUserEmail ?? query.end_user_email,
            endUserOrganizationId: query.endUserOrganizationId,
            search: query.search,
            tags: Object.entries(rawQuery)
              .map(([k, v]) => [/^tags\[(.+)\]$/.exec(k)?.[1], v] as const)
              .filter((e): e is readonly [string, string] => e[0] !== undefined && typeof e[1] === 'string'),
          },
          query,
        );
        return { status: 200, body: { connections: connections.map(connectionSummary), next_cursor: nextCursor } };
      },
    }),
    defineRoute({
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
    }),
    defineRoute({
      method: 'delete',
      path: '/connections/:connectionId',
      operationId: 'deleteConnection',
      tag: 'Connections',
      summary: 'Delete a connection and everything it owns',
      params: ConnectionParams,
      query: IntegrationQuery,
      responses: { 200: { description: 'Deleted', schema: DeleteResponse } },
      errors: [400, 401, 404],
      async handle({ params, query, env }) {
        integrationAndProvider(deps, env.namespace, query.provider_config_key);
        const conn = await deps.connections.findConnection(env.namespace, query.provider_config_key, params.connectionId);
        // The grant is revoked at the provider first where it declares how (best effort, bounded).
        let revocation: RevocationOutcome | undefined;
        const deleted =
          conn && (await deleteConnection(deps, env.namespace, query.provider_config_key, params.connectionId, (o) => (revocation = o)));
        if (!conn || !deleted) throw unknownConnection(params.connectionId, query.provider_config_key);
        // In the environment's ring: the connection's own log goes with it.
        deps.oplog?.record({
          namespace: env.namespace,
          operation: 'deletion',
          outcome: 'success',
          integration: conn.resource.spec.integration,
          connectionId: conn.resource.spec.connectionId,
          endUserId: conn.resource.spec.endUser?.id,
          messages: [
            ...(revocation ? [revocation.message] : []),
            `Connection deleted with its credentials (object ${conn.resource.metadata.name})`,
          ],
        });
        return { status: 200, body: { success: true } };
      },
    }),
  ];
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
    if (err instanceof ConnectionNotFoundError) throw unknownConnection(connectionId, integration);
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

function logImport(deps: RestDeps, conn: StoredConnection, created: boolean): void {
  const r = conn.resource;
  deps.oplog?.record({
    namespace: r.metadata.namespace!,
    operation: 'import',
    step: created ? 'create' : 'replace',
    outcome: 'success',
    integration: r.spec.integration,
    connectionId: r.spec.connectionId,
    connection: { name: r.metadata.name, uid: r.metadata.uid, created },
    endUserId: r.spec.endUser?.id,
    messages: [created ? `Connection imported (${conn.credentials.type})` : `Credentials replaced by an import (${conn.credentials.type})`],
  });
}

/** RFC 9745 Deprecation (a structured date) and the successor. */
const DEPRECATION_HEADERS = { Deprecation: '@1735689600', Link: '</connections>; rel="successor-version"' };

function EmptyObject() {
  return DeleteResponse.pick({}).describe('An empty object');
}

export function unknownConnection(connectionId: string, integrationId: string): LatchkeyError {
  return new LatchkeyError(
    'not_found',
    'unknown_connection',
    `No connection "${connectionId}" for integration "${integrationId}" in this environment`,
  );
}

/** A failed refresh as an HTTP answer: 4xx only when the end user must re-authorize. */
export function refreshFailure(err: RefreshError): LatchkeyError {
  const log = err.logId ? ` (log_id: ${err.logId})` : '';
  if (err.code === 'reauthorization_required') {
    return new LatchkeyError(
      'reauthorization_required',
      'reauthorization_required',
      `The provider rejected the refresh; the end user must reconnect: ${err.message}${log}`,
    );
  }
  if (err.code === 'integration_misconfigured') {
    return new LatchkeyError('unavailable', 'integration_misconfigured', `${err.message}${log}`);
  }
  if (err.code === 'provider_answer_too_large') {
    return new LatchkeyError('upstream', 'provider_answer_too_large', `The token could not be refreshed: ${err.message}${log}`);
  }
  // The provider failing (5xx) is an upstream error; a timeout, a rate limit or a refresh elsewhere is "later".
  const upstreamFailed = err.providerError?.status !== undefined && err.providerError.status >= 500;
  return new LatchkeyError(
    upstreamFailed ? 'upstream' : 'unavailable',
    err.code === 'refresh_in_progress' ? 'refresh_in_progress' : 'provider_unavailable',
    `The token could not be refreshed now; try again later: ${err.message}${log}`,
    { retryAfterMs: err.retryAfterMs },
  );
}

function endUserSpec(u: z.infer<typeof EndUserInput> | undefined, extraTags?: Record<string, string>): EndUserSpec | undefined {
  if (!u) return undefined;
  const tags = { ...(u.tags ?? {}), ...(extraTags ?? {}) };
  return {
    id: u.id,
    ...(u.email !== undefined ? { email: u.email } : {}),
    ...(u.display_name !== undefined ? { displayName: u.display_name } : {}),
    ...(Object.keys(tags).length ? { tags } : {}),
  };
}
