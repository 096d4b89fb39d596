/** `POST /connections`: existing credentials imported as a connection (or replacing an existing one's). */
import { importCredentials } from '../../../../connections/import.js';
import { Connection, ImportConnectionBody } from '../../schemas/connections.js';
import { connectionView } from '../connection-view.js';
import { defineRoute, type RouteSpec } from '../define.js';
import { integrationAndProvider, type RestDeps } from '../deps.js';
import { endUserSpec, logImport } from './imports.js';

export function importConnection(deps: RestDeps): RouteSpec {
  return defineRoute({
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
  });
}
