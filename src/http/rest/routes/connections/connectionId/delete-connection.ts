/** `DELETE /connections/{connectionId}`: the connection and everything it owns (its grant revoked first where the Provider says how). */
import type { RevocationOutcome } from '../../../../../auth/grant-revocation.js';
import { unknownConnection } from '../../../../../connections/errors.js';
import { deleteConnection as deleteStored } from '../../../../../connections/service.js';
import { ConnectionParams, DeleteResponse, IntegrationQuery } from '../../../schemas/connections.js';
import { defineRoute, type RouteSpec } from '../../define.js';
import { integrationAndProvider, type RestDeps } from '../../deps.js';

export function deleteConnection(deps: RestDeps): RouteSpec {
  return defineRoute({
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
        conn && (await deleteStored(deps, env.namespace, query.provider_config_key, params.connectionId, (o) => (revocation = o)));
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
  });
}
