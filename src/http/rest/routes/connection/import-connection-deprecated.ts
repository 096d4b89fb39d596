/** `POST /connection` (deprecated, Nango's older import): flat credential fields interpreted by the provider's auth mode. */
import { importCredentials } from '../../../../connections/import.js';
import { DeleteResponse, DeprecatedImportBody } from '../../schemas/connections.js';
import { endUserSpec, logImport } from '../connections/imports.js';
import { defineRoute, type RouteSpec } from '../define.js';
import { integrationAndProvider, type RestDeps } from '../deps.js';

/** RFC 9745 Deprecation (a structured date) and the successor. */
const DEPRECATION_HEADERS = { Deprecation: '@1735689600', Link: '</connections>; rel="successor-version"' };

function EmptyObject() {
  return DeleteResponse.pick({}).describe('An empty object');
}

export function importConnectionDeprecated(deps: RestDeps): RouteSpec {
  return defineRoute({
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
  });
}
