import { z } from 'zod';
import type { RouteSpec } from './rest/routes/define.js';
import { ErrorBody } from './rest/schemas/common.js';
import { OAuthErrorBody, TOKEN_EXCHANGE_PATH, TokenExchangeAnswer, TokenExchangeForm } from './token-exchange.js';

type JsonSchema = Record<string, unknown>;

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request (body, path or query); `error.errors` lists each problem',
  401: 'Missing, malformed or unknown secret key, or a ServiceAccount token the API server does not accept (expired, another audience, its ServiceAccount deleted)',
  403: "A ServiceAccount's request its RBAC does not allow (`forbidden`: the message names the verb, resource and namespace a Role must grant, as `kubectl auth can-i` asks); see the description for a refusal of the operation itself",
  404: 'Unknown integration, connection or provider',
  413: 'Request body too large',
  429: 'Too many requests (`rate_limited`): retry after the Retry-After header',
  424: 'The provider rejected the refresh (revoked grant): the end user must re-authorize (`reauthorization_required`)',
  502: "The provider's token endpoint failed (`provider_unavailable`); retry later",
  503: 'The provider is unreachable, timed out or rate-limited (`provider_unavailable`, with Retry-After when known), or the service is busy',
};

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const out = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  delete out.$schema;
  return out;
}

function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function parameters(schema: z.ZodType | undefined, where: 'path' | 'query'): JsonSchema[] {
  if (!schema) return [];
  const s = jsonSchema(schema, 'input');
  const props = (s.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((s.required ?? []) as string[]);
  return Object.entries(props).map(([name, p]) => {
    const { description, ...rest } = p;
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      schema: rest,
      ...(description ? { description } : {}),
    };
  });
}

const OAUTH_ERROR = { 'application/json': { schema: { $ref: '#/components/schemas/OAuthError' } } };
const RETRY_AFTER = { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'string' } } };

/**
 * `POST /oauth2/token` (src/http/token-exchange.ts): RFC 8693 token exchange. Not a route spec: its
 * body is a form, it authenticates by the subject token rather than a header, and it answers
 * RFC 6749 §5.2's errors.
 */
function tokenExchangePathItem(): JsonSchema {
  return {
    post: {
      operationId: 'exchangeToken',
      summary: "Exchange a ServiceAccount token or the secret key for a connection's provider access token (RFC 8693)",
      description:
        'The subject token authenticates (no Authorization header). A ServiceAccount token is reviewed by the API server and ' +
        "needs `get` on `connections/credentials` in the connection's namespace (RBAC; `resourceNames` the Connection's object " +
        'name); the secret key reaches the connections of its own Environment. The token is refreshed first when due. `resource` or ' +
        "`audience` is required. Errors are OAuth's (RFC 6749 §5.2), not the REST API's.",
      tags: ['Token exchange'],
      security: [],
      requestBody: {
        required: true,
        content: { 'application/x-www-form-urlencoded': { schema: jsonSchema(TokenExchangeForm, 'input') } },
      },
      responses: {
        200: {
          description: "The connection's access token (never its refresh token)",
          headers: { 'Cache-Control': { description: '`no-store`', schema: { type: 'string' } } },
          content: { 'application/json': { schema: jsonSchema(TokenExchangeAnswer, 'output') } },
        },
        400: {
          description:
            '`invalid_request`: a field missing, repeated or wrong, a body that is not a form, a subject token that is unknown, ' +
            'expired or for another audience; `invalid_target`: `resource`/`audience` not a connection URN, the connection unknown, ' +
            'of another Environment than the key, holding no access token, or its grant refused by the provider (the end user must ' +
            'reconnect); `unauthorized_client`: RBAC does not allow the ServiceAccount `get` on `connections/credentials` (the ' +
            'description names the verb, resource and namespace); `unsupported_grant_type`; `invalid_scope`: a `scope` was sent',
          content: OAUTH_ERROR,
        },
        405: {
          description: '`invalid_request`: only POST is served',
          headers: { Allow: { schema: { type: 'string' } } },
          content: OAUTH_ERROR,
        },
        429: {
          description: '`temporarily_unavailable`: too many failed authentications from this address',
          headers: RETRY_AFTER,
          content: OAUTH_ERROR,
        },
        503: {
          description: '`temporarily_unavailable`: the provider or the Kubernetes API is unreachable; retry later',
          headers: RETRY_AFTER,
          content: OAUTH_ERROR,
        },
      },
    },
  };
}

/** The OpenAPI 3.1 document of the REST API, generated from the same route specs and zod schemas that serve it. */
export function buildOpenApi(routes: RouteSpec[], opts: { version: string; serverUrl?: string }): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const r of routes) {
    const responses: Record<string, JsonSchema> = {};
    for (const [status, doc] of Object.entries(r.responses)) {
      responses[status] = {
        description: doc.description,
        ...(doc.headers
          ? {
              headers: Object.fromEntries(Object.entries(doc.headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }])),
            }
          : {}),
        ...(doc.schema ? { content: { 'application/json': { schema: jsonSchema(doc.schema, 'output') } } } : {}),
      };
    }
    // Every operation may be refused to a ServiceAccount (src/http/access-table.ts gives each its right).
    for (const status of [...new Set([...r.errors, 403])].sort((a, b) => a - b)) {
      responses[String(status)] = {
        description: ERROR_DESCRIPTIONS[status] ?? 'Error',
        ...(status === 503
          ? { headers: { 'Retry-After': { description: 'Seconds to wait, when known', schema: { type: 'string' } } } }
          : {}),
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
    const path = openApiPath(r.path);
    paths[path] ??= {};
    paths[path][r.method] = {
      operationId: r.operationId,
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      tags: [r.tag],
      ...(r.deprecated ? { deprecated: true } : {}),
      parameters: [...parameters(r.params, 'path'), ...parameters(r.query, 'query')],
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(r.body, 'input') } } } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Latchkey REST API',
      version: opts.version,
      description:
        "Connections between an application's end users and third-party APIs. Every REST operation needs `Authorization: Bearer` " +
        "with the Environment's secret key or an in-cluster workload's ServiceAccount token (authorized by RBAC in the " +
        "Environment's namespace, docs/workloads.md). `POST /oauth2/token` is RFC 8693 token exchange.",
    },
    ...(opts.serverUrl ? { servers: [{ url: opts.serverUrl }] } : {}),
    security: [{ secretKey: [] }, { serviceAccountToken: [] }],
    components: {
      securitySchemes: {
        secretKey: { type: 'http', scheme: 'bearer', description: "The Environment's secret key" },
        serviceAccountToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            "A projected ServiceAccount token (audience `latchkey` by default); each request needs the RBAC verb and resource docs/workloads.md lists, in the Environment's namespace",
        },
      },
      schemas: { Error: jsonSchema(ErrorBody, 'output'), OAuthError: jsonSchema(OAuthErrorBody, 'output') },
    },
    paths: { ...paths, [TOKEN_EXCHANGE_PATH]: tokenExchangePathItem() },
  };
}
