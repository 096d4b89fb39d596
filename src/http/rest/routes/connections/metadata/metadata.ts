/** `POST`/`PATCH /connections/metadata`: replace or merge the metadata of one or many connections. */
import { updateMetadata } from '../../../../../connections/metadata.js';
import { MetadataBody, MetadataResponse } from '../../../schemas/connections.js';
import type { RouteSpec } from '../../define.js';
import { metadataPair } from '../../metadata-pair.js';
import { integrationAndProvider, type RestDeps } from '../../deps.js';

export function connectionsMetadata(deps: RestDeps): RouteSpec[] {
  const names = {
    replace: { operationId: 'setMetadata', summary: 'Replace the metadata of one or many connections' },
    merge: { operationId: 'updateMetadata', summary: 'Merge keys into the metadata of one or many connections (shallow)' },
  };
  return metadataPair(
    names,
    {
      path: '/connections/metadata',
      body: MetadataBody,
      responses: { 200: { description: 'Updated', schema: MetadataResponse } },
      errors: [400, 401, 404],
    },
    (mode) =>
      async function handle({ body, env }) {
        const ids = Array.isArray(body.connection_id) ? body.connection_id : [body.connection_id];
        integrationAndProvider(deps, env.namespace, body.provider_config_key);
        const updated = await updateMetadata(deps, env.namespace, body.provider_config_key, ids, body.metadata, mode);
        const metadata =
          updated.length === 1 && !Array.isArray(body.connection_id) ? (updated[0]!.resource.spec.metadata ?? {}) : body.metadata;
        return { status: 200, body: { connection_id: body.connection_id, provider_config_key: body.provider_config_key, metadata } };
      },
  );
}
