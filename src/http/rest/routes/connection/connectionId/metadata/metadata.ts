/** `POST`/`PATCH /connection/{connectionId}/metadata` (Nango's older form): replace or merge one connection's metadata. */
import { updateMetadata } from '../../../../../../connections/metadata.js';
import { LatchkeyError } from '../../../../../../domain/errors.js';
import { parse } from '../../../../../errors.js';
import { JsonObject } from '../../../../schemas/common.js';
import { ConnectionParams, LegacyMetadataQuery, MetadataResponse } from '../../../../schemas/connections.js';
import type { RouteSpec } from '../../../define.js';
import { metadataPair } from '../../../metadata-pair.js';
import { integrationAndProvider, type RestDeps } from '../../../deps.js';

export function connectionMetadata(deps: RestDeps): RouteSpec[] {
  const names = {
    replace: { operationId: 'setConnectionMetadata', summary: "Replace a connection's metadata (body: the metadata object)" },
    merge: { operationId: 'updateConnectionMetadata', summary: "Merge keys into a connection's metadata (body: the keys)" },
  };
  return metadataPair(
    names,
    {
      path: '/connection/:connectionId/metadata',
      description: 'The integration ID comes from the `provider_config_key` query parameter or the `Provider-Config-Key` header.',
      params: ConnectionParams,
      query: LegacyMetadataQuery,
      body: JsonObject,
      responses: { 200: { description: 'Updated', schema: MetadataResponse } },
      errors: [400, 401, 404],
    },
    (mode) =>
      async function handle({ params, query, body, env, header: headerOf }) {
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
        integrationAndProvider(deps, env.namespace, integrationId);
        const [updated] = await updateMetadata(deps, env.namespace, integrationId, [params.connectionId], body, mode);
        return {
          status: 200,
          body: { connection_id: params.connectionId, provider_config_key: integrationId, metadata: updated!.resource.spec.metadata ?? {} },
        };
      },
  );
}
