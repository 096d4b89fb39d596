import { JwtMintError, mintJwtCredentials } from '../../../auth/jwt-minting.js';
import { ConnectionNotFoundError, RefreshError } from '../../../auth/refresh/token-refresher.js';
import type { ConnectionResource, EndUserSpec, ProviderResource } from '../../../k8s/resources.js';
import type { StoredConnection, StoredCredentials } from '../../../k8s/store.js';
import { ApiError } from '../../errors.js';
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
import { connectionSummary, connectionView } from './connection-view.js';
import { defineRoute, type RouteSpec } from './define.js';
import { integrationAndProvider, type RestDeps } from './deps.js';
import { importConnection } from '../../../connections/import.js';
import { storedFromImport } from '../credentials-from-body.js';
import type { z } from 'zod';

/** `last_fetched_at` is written at most this often per connection (the response always carries the fetch time). */
const LAST_FETCHED_WRITE_INTERVAL_MS = 60_000;
const DEFAULT_PAGE = 100;

export function connectionRoutes(deps: RestDeps): RouteSpec[] {
  const lastFetchWrites = new Map<string, number>();

  async function recordFetch(namespace: string, name: string, at: number): Promise<void> {
    const key = `${namespace}/${name}`;
    if ((lastFetchWrites.get(key) ?? 0) > at - LAST_FETCHED_WRITE_INTERVAL_MS) return;
    lastFetchWrites.set(key, at);
    if (lastFetchWrites.size > 10_000) lastFetchWrites.clear();
    await deps.store
      .updateConnectionStatus(namespace, name, (s) => {
        const previous = s.lastFetchedAt ? Date.parse(s.lastFetchedAt) : 0;
        return previous > at - LAST_FETCHED_WRITE_INTERVAL_MS ? undefined : { ...s, lastFetchedAt: new Date(at).toISOString() };
      })
      .catch((err: unknown) => deps.logger.warn({ namespace, connection: name, err: String(err) }, 'could not record last_fetched_at'));
  }

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
        if (body.credentials.type !== provider.spec.authMode) {
          throw typeMismatch(body.credentials.type, provider.spec.authMode, provider.metadata.name);
        }
        let credentials = storedFromImport(body.credentials);
        if (body.credentials.type === 'JWT') {
          // The token's claims may use the configuration kept by a connection being re-imported.
          const kept = body.connection_id
            ? deps.store.getConnection(env.namespace, integration.metadata.name, body.connection_id)?.resource.spec.connectionConfig
            : undefined;
          credentials = jwtImport(provider, body.credentials.apiKey, { ...kept, ...body.connection_config }, deps.clock.now());
        }
        const { connection, created } = await importConnection(deps, {
          namespace: env.namespace,
          integration,
          provider,
          connectionId: body.connection_id,
          credentials,
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
        const credentials = credentialsFromDeprecated(body, provider.spec.authMode, provider.metadata.name, deps.clock.now());
        const { connection, created } = await importConnection(deps, {
          namespace: env.namespace,
          integration,
          provider,
          connectionId: body.connection_id,
          credentials,
          metadata: body.metadata,
          connectionConfig: body.connection_config,
          endUser: endUserSpec(body.end_user),
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
      description: 'Filters combine with AND. Sorted by creation time; page with `limit` and `cursor` (or `offset` / `page`).',
      query: ListConnectionsQuery,
      responses: { 200: { description: 'A page of connections', schema: ConnectionsList } },
      errors: [400, 401],
      handle({ query, req, env }) {
        const integrations = (query.integrationId ?? query.provider_config_key)
          ?.split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        const endUserId = query.endUserId ?? query.end_user_id;
        const email = (query.endUserEmail ?? query.end_user_email)?.toLowerCase();
        const search = query.search?.toLowerCase();
        const tagFilters = Object.entries(req.query)
          .map(([k, v]) => [/^tags\[(.+)\]$/.exec(k)?.[1], v] as const)
          .filter((e): e is readonly [string, string] => e[0] !== undefined && typeof e[1] === 'string');
        const all = deps.store.listConnections(env.namespace).filter((c) => {
          const u = c.spec.endUser;
          if (query.connectionId !== undefined && c.spec.connectionId !== query.connectionId) return false;
          if (integrations?.length && !integrations.includes(c.spec.integration)) return false;
          if (endUserId !== undefined && u?.id !== endUserId) return false;
          if (email !== undefined && u?.email?.toLowerCase() !== email) return false;
          if (query.endUserOrganizationId !== undefined && u?.organization?.id !== query.endUserOrganizationId) return false;
          for (const [tag, value] of tagFilters) {
            const actual = tag === 'end_user_email' ? u?.email : tag === 'end_user_display_name' ? u?.displayName : findTag(u?.tags, tag);
            if (actual !== value) return false;
          }
          if (search && ![c.spec.connectionId, u?.id, u?.email, u?.displayName].some((v) => v?.toLowerCase().includes(search)))
            return false;
          return true;
        });
        all.sort(byCreation);
        const limit = query.limit ?? DEFAULT_PAGE;
        let start = 0;
        if (query.cursor !== undefined) {
          const after = decodeCursor(query.cursor);
          start = all.findIndex((c) => byCreation(c, after) > 0);
          if (start < 0) start = all.length;
        } else if (query.offset !== undefined) start = query.offset;
        else if (query.page !== undefined) start = query.page * limit;
        const page = all.slice(start, start + limit);
        const last = page[page.length - 1];
        return {
          status: 200,
          body: {
            connections: page.map(connectionSummary),
            next_cursor: last && start + limit < all.length ? encodeCursor(last) : null,
          },
        };
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
      async handle({ params, query, env }) {
        integrationAndProvider(deps, env.namespace, query.provider_config_key);
        const appJwt = query.refresh_codehost_app_jwt_token ?? query.refresh_github_app_jwt_token ?? false;
        const existing = deps.store.getConnection(env.namespace, query.provider_config_key, params.connectionId);
        if (!existing) throw unknownConnection(params.connectionId, query.provider_config_key);
        const force = (query.force_refresh ?? false) || (appJwt && existing.credentials.type === 'APP');
        let conn;
        try {
          conn = await deps.refresher.ensureFresh(env.namespace, query.provider_config_key, params.connectionId, {
            force,
            reason: 'fetch',
          });
        } catch (err) {
          if (err instanceof ConnectionNotFoundError) throw unknownConnection(params.connectionId, query.provider_config_key);
          if (err instanceof RefreshError) throw refreshFailure(err);
          throw err;
        }
        const now = deps.clock.now();
        await recordFetch(env.namespace, conn.resource.metadata.name, now);
        return {
          status: 200,
          body: connectionView(conn, { includeRefreshToken: query.refresh_token ?? false, lastFetchedAt: new Date(now).toISOString() }),
        };
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
        const conn = deps.store.getConnection(env.namespace, query.provider_config_key, params.connectionId);
        if (!conn) throw unknownConnection(params.connectionId, query.provider_config_key);
        const name = conn.resource.metadata.name;
        await deps.store.deleteConnection(env.namespace, name);
        await deps.refreshLock.remove(env.namespace, name).catch(() => undefined);
        // In the environment's ring: the connection's own log goes with it.
        deps.oplog?.record({
          namespace: env.namespace,
          operation: 'deletion',
          outcome: 'success',
          integration: conn.resource.spec.integration,
          connectionId: conn.resource.spec.connectionId,
          endUserId: conn.resource.spec.endUser?.id,
          messages: [`Connection deleted with its credentials (object ${name})`],
        });
        return { status: 200, body: { success: true } };
      },
    }),
  ];
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
    connection: { name: r.metadata.name, uid: r.metadata.uid },
    endUserId: r.spec.endUser?.id,
    messages: [created ? `Connection imported (${conn.credentials.type})` : `Credentials replaced by an import (${conn.credentials.type})`],
  });
}

/** RFC 9745 Deprecation (a structured date) and the successor. */
const DEPRECATION_HEADERS = { Deprecation: '@1735689600', Link: '</connections>; rel="successor-version"' };

function EmptyObject() {
  return DeleteResponse.pick({}).describe('An empty object');
}

export function unknownConnection(connectionId: string, integrationId: string): ApiError {
  return new ApiError(404, 'unknown_connection', `No connection "${connectionId}" for integration "${integrationId}" in this environment`);
}

function typeMismatch(type: string, authMode: string, provider: string): ApiError {
  return new ApiError(
    400,
    'credentials_type_mismatch',
    `credentials.type ${type} does not match the auth mode ${authMode} of provider "${provider}"`,
    [{ path: 'body.credentials.type', message: `expected ${authMode}`, code: 'credentials_type_mismatch' }],
  );
}

/** A failed refresh as an HTTP answer: 4xx only when the end user must re-authorize. */
export function refreshFailure(err: RefreshError): ApiError {
  const log = err.logId ? ` (log_id: ${err.logId})` : '';
  if (err.code === 'reauthorization_required') {
    return new ApiError(
      424,
      'reauthorization_required',
      `The provider rejected the refresh; the end user must reconnect: ${err.message}${log}`,
    );
  }
  if (err.code === 'integration_misconfigured') {
    return new ApiError(503, 'integration_misconfigured', `${err.message}${log}`);
  }
  const status = err.providerError?.status !== undefined && err.providerError.status >= 500 ? 502 : 503;
  const e = new ApiError(
    status,
    err.code === 'refresh_in_progress' ? 'refresh_in_progress' : 'provider_unavailable',
    `The token could not be refreshed now; try again later: ${err.message}${log}`,
  );
  return Object.assign(e, {
    retryAfterSeconds: err.retryAfterMs !== undefined ? Math.max(1, Math.ceil(err.retryAfterMs / 1000)) : undefined,
  });
}

/** JWT import: a token is minted from the key at once, so a key that cannot sign is refused before anything is stored. */
function jwtImport(provider: ProviderResource, apiKey: string, connectionConfig: Record<string, unknown>, now: number): StoredCredentials {
  try {
    return mintJwtCredentials({
      modeOptions: provider.spec.modeOptions,
      apiKey,
      connectionConfig,
      now,
      provider: `provider "${provider.metadata.name}"`,
    });
  } catch (err) {
    if (!(err instanceof JwtMintError)) throw err;
    if (err.problem === 'invalid_key') {
      throw new ApiError(400, 'invalid_credentials', `credentials.apiKey cannot sign ${provider.metadata.name} tokens: ${err.message}`, [
        { path: 'body.credentials.apiKey', message: err.message, code: 'invalid_credentials' },
      ]);
    }
    if (err.problem === 'missing_connection_config') {
      throw new ApiError(
        400,
        'missing_connection_config',
        `${err.message}; pass it in connection_config`,
        err.keys.map((k) => ({ path: `body.connection_config.${k}`, message: 'required', code: 'missing_connection_config' })),
      );
    }
    throw new ApiError(503, 'integration_misconfigured', err.message);
  }
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

/** The deprecated flat import body as stored credentials of the provider's auth mode. */
function credentialsFromDeprecated(
  body: z.infer<typeof DeprecatedImportBody>,
  authMode: string,
  provider: string,
  now: number,
): StoredCredentials {
  const present = (keys: (keyof typeof body)[]) => keys.filter((k) => body[k] !== undefined);
  const missing = (keys: (keyof typeof body)[]) => keys.filter((k) => body[k] === undefined);
  const require = (keys: (keyof typeof body)[]) => {
    const m = missing(keys);
    if (m.length) {
      throw new ApiError(
        400,
        'missing_credentials',
        `Provider "${provider}" uses ${authMode}: ${m.join(', ')} required`,
        m.map((k) => ({ path: `body.${k}`, message: 'required', code: 'missing_credentials' })),
      );
    }
  };
  const only = (allowed: (keyof typeof body)[]) => {
    const credentialFields: (keyof typeof body)[] = [
      'access_token',
      'refresh_token',
      'expires_at',
      'expires_in',
      'no_expiration',
      'oauth_client_id_override',
      'oauth_client_secret_override',
      'oauth_token',
      'oauth_token_secret',
      'username',
      'password',
      'api_key',
    ];
    const wrong = present(credentialFields.filter((k) => !allowed.includes(k)));
    if (wrong.length) {
      throw new ApiError(
        400,
        'credentials_type_mismatch',
        `Provider "${provider}" uses ${authMode}; these fields do not apply: ${wrong.join(', ')}`,
        wrong.map((k) => ({ path: `body.${k}`, message: `not used by ${authMode}`, code: 'credentials_type_mismatch' })),
      );
    }
  };
  switch (authMode) {
    case 'OAUTH2': {
      only([
        'access_token',
        'refresh_token',
        'expires_at',
        'expires_in',
        'no_expiration',
        'oauth_client_id_override',
        'oauth_client_secret_override',
      ]);
      require(['access_token']);
      const expiresAt =
        body.expires_at !== undefined
          ? new Date(body.expires_at).toISOString()
          : body.expires_in !== undefined
            ? new Date(now + body.expires_in * 1000).toISOString()
            : undefined;
      if (!expiresAt && !body.no_expiration) {
        throw new ApiError(
          400,
          'missing_expiration',
          "OAuth 2 import needs expires_at (preferred) or expires_in, or no_expiration: true when the provider's tokens never expire",
          [{ path: 'body.expires_at', message: 'required unless expires_in or no_expiration is given', code: 'missing_expiration' }],
        );
      }
      const override = { client_id: body.oauth_client_id_override, client_secret: body.oauth_client_secret_override };
      const raw: Record<string, unknown> = { access_token: body.access_token };
      if (body.refresh_token) raw.refresh_token = body.refresh_token;
      if (body.expires_in !== undefined) raw.expires_in = body.expires_in;
      return {
        type: 'OAUTH2',
        access_token: body.access_token!,
        ...(body.refresh_token ? { refresh_token: body.refresh_token } : {}),
        ...(expiresAt ? { expires_at: expiresAt } : {}),
        raw,
        ...(override.client_id || override.client_secret ? { config_override: JSON.parse(JSON.stringify(override)) as object } : {}),
      };
    }
    case 'OAUTH1':
      only(['oauth_token', 'oauth_token_secret']);
      require(['oauth_token', 'oauth_token_secret']);
      return {
        type: 'OAUTH1',
        oauth_token: body.oauth_token!,
        oauth_token_secret: body.oauth_token_secret!,
        raw: { oauth_token: body.oauth_token, oauth_token_secret: body.oauth_token_secret },
      };
    case 'BASIC':
      only(['username', 'password']);
      require(['username', 'password']);
      return { type: 'BASIC', username: body.username!, password: body.password! };
    case 'API_KEY':
      only(['api_key']);
      require(['api_key']);
      return { type: 'API_KEY', apiKey: body.api_key! };
    case 'NONE':
      only([]);
      return { type: 'NONE' };
    default:
      throw new ApiError(
        400,
        'unsupported_auth_mode',
        `Provider "${provider}" uses ${authMode}, which cannot be imported; connect it through a connect session instead`,
      );
  }
}

function findTag(tags: Record<string, string> | undefined, key: string): string | undefined {
  if (!tags) return undefined;
  return tags[key] ?? Object.entries(tags).find(([k]) => k.toLowerCase() === key)?.[1];
}

function createdOf(c: ConnectionResource): string {
  return String(
    c.metadata.creationTimestamp instanceof Date ? c.metadata.creationTimestamp.toISOString() : (c.metadata.creationTimestamp ?? ''),
  );
}

function byCreation(
  a: ConnectionResource | { created: string; name: string },
  b: ConnectionResource | { created: string; name: string },
): number {
  const key = (x: typeof a) => ('metadata' in x ? { created: createdOf(x), name: x.metadata.name } : x);
  const ka = key(a);
  const kb = key(b);
  return ka.created.localeCompare(kb.created) || ka.name.localeCompare(kb.name);
}

function encodeCursor(c: ConnectionResource): string {
  return Buffer.from(JSON.stringify([createdOf(c), c.metadata.name]), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): { created: string; name: string } {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string') return { created: v[0], name: v[1] };
  } catch {
    // fall through
  }
  throw new ApiError(400, 'invalid_cursor', 'cursor is not one this API returned', [
    { path: 'query.cursor', message: 'invalid cursor', code: 'invalid_cursor' },
  ]);
}
