import type { StoredConnection } from '../../../k8s/store.js';
import { LatchkeyError } from '../../../domain/errors.js';
import { parse } from '../../errors.js';
import { ConnectionParams, LegacyMetadataQuery, MetadataBody, MetadataResponse } from '../schemas/connections.js';
import { JsonObject } from '../schemas/common.js';
import { unknownConnection } from './connections.js';
import { defineRoute, type RouteSpec } from './define.js';
import { integrationAndProvider, type RestDeps } from './deps.js';
import { ConnectionStatusWriter } from '../../../domain/connection-status-writers.js';

type Mode = 'replace' | 'merge';

export function metadataRoutes(deps: RestDeps): RouteSpec[] {
  /** Checks every connection exists first (nothing is written when one is unknown), then updates each. */
  async function update(
    namespace: string,
    integrationId: string,
    connectionIds: string[],
    metadata: Record<string, unknown>,
    mode: Mode,
  ): Promise<StoredConnection[]> {
    integrationAndProvider(deps, namespace, integrationId);
    const found = await Promise.all(
      connectionIds.map(async (id) => [id, await deps.connections.findConnection(namespace, integrationId, id)] as const),
    );
    const unknown = found.filter(([, c]) => !c).map(([id]) => id);
    if (unknown.length === 1) throw unknownConnection(unknown[0]!, integrationId);
    if (unknown.length > 1) {
      throw new LatchkeyError(
        'not_found',
        'unknown_connection',
        `No connections ${unknown.map((u) => `"${u}"`).join(', ')} for integration "${integrationId}"; nothing was updated`,
        { errors: unknown.map((id) => ({ message: `unknown connection ${id}`, code: 'unknown_connection' })) },
      );
    }
    const now = new Date(deps.clock.now()).toISOString();
    return Promise.all(
      found.map(async ([, c]) => {
        const name = c!.resource.metadata.name;
        await deps.connections.updateConnection(namespace, name, (cur) => ({
          ...cur,
          spec: { ...cur.spec, metadata: mode === 'replace' ? metadata : { ...(cur.spec.metadata ?? {}), ...metadata } },
        }));
        const resource = await deps.connections.updateConnectionStatus(namespace, name, ConnectionStatusWriter.Metadata, (s) => ({
          ...s,
          updatedAt: now,
        }));
        return { ...c!, resource };
      }),
    );
  }

  const bulk = (method: 'post' | 'patch', mode: Mode) =>
    defineRoute({
      method,
      path: '/connections/metadata',
      operationId: mode === 'replace' ? 'setMetadata' : 'updateMetadata',
      tag: 'Metadata',
      summary:
        mode === 'replace'
          ? 'Replace the metadata of one or many connections'
          : 'Merge keys into the metadata of one or many connections (shallow)',
      body: MetadataBody,
      responses: { 200: { description: 'Updated', schema: MetadataResponse } },
      errors: [400, 401, 404],
      async handle({ body, env }) {
        const ids = Array.isArray(body.connection_id) ? body.connection_id : [body.connection_id];
        const updated = await update(env.namespace, body.provider_config_key, ids, body.metadata, mode);
        const metadata =
          updated.length === 1 && !Array.isArray(body.connection_id) ? (updated[0]!.resource.spec.metadata ?? {}) : body.metadata;
        return { status: 200, body: { connection_id: body.connection_id, provider_config_key: body.provider_config_key, metadata } };
      },
    });

  const single = (method: 'post' | 'patch', mode: Mode) =>
    defineRoute({
      method,
      path: '/connection/:connectionId/metadata',
      operationId: mode === 'replace' ? 'setConnectionMetadata' : 'updateConnectionMetadata',
      tag: 'Metadata',
      summary:
        mode === 'replace'
          ? "Replace a connection's metadata (body: the metadata object)"
          : "Merge keys into a connection's metadata (body: the keys)",
      description: 'The integration ID comes from the `provider_config_key` query parameter or the `Provider-Config-Key` header.',
      params: ConnectionParams,
      query: LegacyMetadataQuery,
      body: JsonObject,
      responses: { 200: { description: 'Updated', schema: MetadataResponse } },
      errors: [400, 401, 404],
      async handle({ params, query, body, env, header: headerOf }) {
        const header = headerOf('provider-config-key');
        const integrationId =
          query.provider_config_key ??
          (header !== undefined ? parse(LegacyMetadataQuery.shape.provider_config_key.unwrap(), header, 'headers') : undefined);
        if (!integrationId) {
          throw new LatchkeyError(
            'invalid_input',
            'invalid_query',
            'provider_config_key is required (query parameter or Provider-Config-Key header)',
            {
              errors: [{ path: 'query.provider_config_key', message: 'required', code: 'invalid_type' }],
            },
          );
        }
        const [updated] = await update(env.namespace, integrationId, [params.connectionId], body, mode);
        return {
          status: 200,
          body: { connection_id: params.connectionId, provider_config_key: integrationId, metadata: updated!.resource.spec.metadata ?? {} },
        };
      },
    });

  // The bulk routes come first: `/connections/metadata` must not be read as a connection ID.
  return [bulk('post', 'replace'), bulk('patch', 'merge'), single('post', 'replace'), single('patch', 'merge')];
}
