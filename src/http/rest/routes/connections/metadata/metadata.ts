/** `POST`/`PATCH /connections/metadata`: replace or merge the metadata of one or many connections. */
import { updateMetadata, type MetadataMode } from '../../../../../connections/metadata.js';
import { MetadataBody, MetadataResponse } from '../../../schemas/connections.js';
import { defineRoute, type RouteSpec } from '../../define.js';
import { integrationAndProvider, type RestDeps } from '../../deps.js';

/** POST replaces, PATCH merges. */
export function connectionsMetadata(deps: RestDeps): RouteSpec[] {
  return [bulk(deps, 'post', 'replace'), bulk(deps, 'patch', 'merge')];
}

function bulk(deps: RestDeps, method: 'post' | 'patch', mode: MetadataMode): RouteSpec {
  return defineRoute({
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
      integrationAndProvider(deps, env.namespace, body.provider_config_key);
      const updated = await updateMetadata(deps, env.namespace, body.provider_config_key, ids, body.metadata, mode);
      const metadata =
        updated.length === 1 && !Array.isArray(body.connection_id) ? (updated[0]!.resource.spec.metadata ?? {}) : body.metadata;
      return { status: 200, body: { connection_id: body.connection_id, provider_config_key: body.provider_config_key, metadata } };
    },
  });
}
