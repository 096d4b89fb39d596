/**
 * The calls the auth-mode suites make against a Latchkey server, whichever bed started it: REST with
 * the Environment's secret key, the Connect UI's JSON API with a session token, and a request through
 * the proxy (node:http, so the path goes out as written).
 */
import { sealSession } from './fixtures.js';
import { proxyHeaders, rawRequest, type ProxyBed } from './proxy-bed.js';

/** A Latchkey server and the secret key of the Environment the suite uses. */
export interface ServerUnderTest {
  url: string;
  env: { secretKey: string };
}

/** The server a ProxyBed runs. */
export const serverOf = (h: Pick<ProxyBed, 'server' | 'env'>): ServerUnderTest => ({ url: h.server.url, env: h.env });

/** An answer's body: its JSON when it parses, else its text (undefined when empty). */
export async function bodyOf(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}

export type JsonCall = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

async function jsonRequest(url: string, bearer: string, method: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** The REST API (`/connections`, `/connection`, …) with the secret key. */
export function restClient(server: ServerUnderTest): JsonCall {
  return (method, path, body) => jsonRequest(`${server.url}${path}`, server.env.secretKey, method, body);
}

/** An import through the REST API: POST /connections (or the deprecated POST /connection) naming the connection, with the rest of the body. */
export type ImportCall = (integration: string, connectionId: string, body?: Record<string, unknown>) => ReturnType<JsonCall>;

/** An import refused with 400 and the error `code`, naming (when given) exactly the request fields `paths`. */
export function expectRefused(res: { status: number; body: any }, code: string, paths?: string[]): void {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe(code);
  if (paths) expect(res.body.error.errors.map((e: { path: string }) => e.path)).toEqual(paths);
}

export function importCalls(rest: JsonCall): { importConnection: ImportCall; importLegacy: ImportCall } {
  const post =
    (path: string): ImportCall =>
    (integration, connectionId, body = {}) =>
      rest('POST', path, { provider_config_key: integration, connection_id: connectionId, ...body });
  return { importConnection: post('/connections'), importLegacy: post('/connection') };
}

/** The Connect UI's JSON API (`/connect/api/…`) with a session token for one end user and the given integrations. */
export function connectApiClient(
  server: ServerUnderTest,
  session: { namespace: string; endUserId: string; integrations: string[] },
): JsonCall {
  const token = sealSession(server.env.secretKey, {
    namespace: session.namespace,
    endUser: { id: session.endUserId },
    allowedIntegrations: session.integrations,
  });
  return (method, path, body) => jsonRequest(`${server.url}/connect/api/${path}`, token, method, body);
}

export type ProxyCall = (
  connectionId: string,
  path: string,
  opts?: { method?: string; body?: string; headers?: Record<string, string> },
) => Promise<{ status: number; body: any }>;

/** Requests through `/proxy` for one integration; the upstream's answer parsed as JSON. */
export function proxyClient(server: ServerUnderTest, integration: string): ProxyCall {
  const port = Number(new URL(server.url).port);
  const bed = { env: server.env } as ProxyBed;
  return async (connectionId, path, opts = {}) => {
    const res = await rawRequest(port, {
      method: opts.method,
      path: `/proxy${path}`,
      headers: proxyHeaders(bed, integration, connectionId, opts.headers),
      body: opts.body,
    });
    return { status: res.status, body: JSON.parse(res.body.toString() || 'null') };
  };
}
