import { z } from 'zod';
import type { RouteSpec } from './rest/routes/define.js';
import { ErrorBody } from './rest/schemas/common.js';

type JsonSchema = Record<string, unknown>;

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request (body, path or query); `error.errors` lists each problem',
  401: 'Missing, malformed or unknown secret key',
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
    for (const status of r.errors) {
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
        "Connections between an application's end users and third-party APIs. Every operation needs `Authorization: Bearer <environment secret key>`.",
    },
    ...(opts.serverUrl ? { servers: [{ url: opts.serverUrl }] } : {}),
    security: [{ secretKey: [] }],
    components: {
      securitySchemes: { secretKey: { type: 'http', scheme: 'bearer', description: "The Environment's secret key" } },
      schemas: { Error: jsonSchema(ErrorBody, 'output') },
    },
    paths,
  };
}
