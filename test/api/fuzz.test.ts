/**
 * Property-based fuzzing of every REST operation (walking the route table the OpenAPI document is
 * generated from, with values shaped by the same zod schemas), the Connect API and the OAuth
 * callback, against a real server and API server. Properties: no answer is 5xx except the documented
 * upstream failure (502/503 `provider_unavailable`); every error is the JSON `{error:{code,message}}`
 * body; connections that existed before are unchanged after.
 *
 * Bounded by runs and time (FUZZ_RUNS, FUZZ_SECONDS); on failure fast-check prints the seed and
 * path: rerun with FUZZ_SEED=<seed> to replay it.
 */
import { maxHeaderSize, request } from 'node:http';
import fc from 'fast-check';
import { testKubeConfig } from '../../dev/cluster.js';
import type { TestEnvironment } from '../../dev/fixtures.js';
import { restDeps, restRoutes } from '../../src/http/rest/routes/index.js';
import type { RouteSpec } from '../../src/http/rest/routes/define.js';
import { startHostileBed, type HostileBed } from '../support/hostile-bed.js';
import type { Replica } from '../support/replica.js';
import {
  acceptableStatus,
  asText,
  bodyText,
  fromSchema,
  hostileString,
  isErrorBody,
  queryString,
  requestSchema,
  urlText,
} from '../support/hostile.js';

const kc = testKubeConfig();
const OAUTH = 'fuzz-oauth';
const KEYS = 'fuzz-apikey';
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const SECONDS = Number(process.env.FUZZ_SECONDS ?? 25);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
// Strings worth trying in any field: they get requests past "unknown integration".
const KNOWN = ['crm', 'keys', OAUTH, KEYS, 'OAUTH2', 'API_KEY'];
// IDs the fuzzer cannot guess (so a valid DELETE of them is not a finding).
const suffix = Math.random().toString(36).slice(2, 10);
const KEPT = [
  { integration: 'keys', id: `kept-key-${suffix}` },
  { integration: 'crm', id: `kept-oauth-${suffix}` },
];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];

let bed: HostileBed | undefined;
let env: TestEnvironment;
let api: Replica;
let routes: RouteSpec[];

beforeAll(async () => {
  // Fuzzed headers carry wrong secret keys from this one address, and the throttle stays on as
  // deployed: the snapshots' correct key is served all the same.
  bed = await startHostileBed(kc, 'fuzz', 'Fuzz', { selfBaseUrl: true });
  ({ env, api } = bed);
  routes = restRoutes(restDeps(api.ctx));

  const created = await Promise.all([
    api.call('POST', '/connections', {
      body: {
        provider_config_key: 'keys',
        connection_id: KEPT[0]!.id,
        credentials: { type: 'API_KEY', apiKey: 'kept-key' },
        metadata: { plan: 'gold', nested: { a: [1, 2] } },
        end_user: { id: 'kept-user', email: 'kept@example.test' },
      },
    }),
    api.call('POST', '/connections', {
      body: {
        provider_config_key: 'crm',
        connection_id: KEPT[1]!.id,
        credentials: { type: 'OAUTH2', access_token: 'kept-at', refresh_token: 'kept-rt', expires_at: '2099-01-01T00:00:00Z' },
      },
    }),
  ]);
  expect(created.map((c) => c.status)).toEqual([201, 201]);
}, 180_000);

afterAll(async () => {
  await bed?.close();
});

/** The kept connections as the API shows them, without what reading them changes. */
async function snapshot(): Promise<unknown> {
  const one = await Promise.all(
    KEPT.map(async (k) => {
      const res = await api.call('GET', `/connections/${k.id}?provider_config_key=${k.integration}&refresh_token=true`);
      const { last_fetched_at: _l, updated_at: _u, ...rest } = res.body ?? {};
      return { status: res.status, ...rest };
    }),
  );
  const list = await api.call('GET', '/connections?limit=1000');
  const listed = (list.body.connections as Array<Record<string, unknown>>)
    .filter((c) => KEPT.some((k) => k.id === c.connection_id))
    .map(({ last_fetched_at: _l, updated_at: _u, ...rest }) => rest);
  return { one, listed };
}

interface Outcome {
  method: string;
  url: string;
  status: number;
  body: unknown;
  contentType: string | null;
}

/**
 * One request on its own connection (node:http, no agent): a reused keep-alive socket that the server
 * closes as the next request leaves would look like a reset the server caused.
 */
function send(method: string, url: string, opts: { body?: string; headers?: Record<string, string>; key?: string }): Promise<Outcome> {
  const { hostname, port } = new URL(api.url);
  const body = opts.body !== undefined && method !== 'GET' && method !== 'HEAD' ? Buffer.from(opts.body) : undefined;
  const headers = {
    ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}),
    ...(body ? { 'content-length': String(body.length) } : {}),
    ...opts.headers,
  };
  return new Promise<Outcome>((resolve, reject) => {
    const req = request({ hostname, port, method, path: url, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          // not JSON: check() reports it
        }
        resolve({ method, url, status: res.statusCode ?? 0, body: parsed, contentType: res.headers['content-type'] ?? null });
      });
    });
    // A head over Node's limit is refused by its HTTP parser with a 431 and the connection closed,
    // before any handler runs; a client still sending its body then sees the reset instead.
    const oversizedHead = Buffer.byteLength(url) + Buffer.byteLength(JSON.stringify(headers)) > maxHeaderSize;
    req.on('error', (err) =>
      oversizedHead
        ? resolve({ method, url, status: 431, body: undefined, contentType: null })
        : // A connection the server drops is a finding too: say which request it was.
          reject(
            new Error(
              `${method} ${url.slice(0, 300)} (${JSON.stringify(opts.headers)}, body of ${body?.length ?? 0} bytes) failed: ${err.message}`,
            ),
          ),
    );
    req.end(body);
  });
}

/** The properties every JSON answer to hostile input has. */
function check(o: Outcome): void {
  if (!acceptableStatus(o.status, o.body))
    throw new Error(`${o.method} ${o.url.slice(0, 300)} answered ${o.status}: ${JSON.stringify(o.body)}`);
  // 431: Node's HTTP parser refuses oversized headers before any handler runs (no body at all).
  if (o.status >= 400 && o.method !== 'HEAD' && o.status !== 431) {
    if (!o.contentType?.startsWith('application/json') || !isErrorBody(o.body)) {
      throw new Error(
        `${o.method} ${o.url.slice(0, 300)} answered ${o.status} with ${o.contentType}: ${JSON.stringify(o.body)?.slice(0, 300)}`,
      );
    }
  }
}

/** One request to one operation of the route table, every part from its schema or hostile. */
function restRequest(route: RouteSpec): fc.Arbitrary<{ method: string; url: string; body?: string; headers: Record<string, string> }> {
  const paramsSchema = route.params ? requestSchema(route.params) : undefined;
  const querySchema = route.query ? requestSchema(route.query) : undefined;
  const bodySchema = route.body ? requestSchema(route.body) : undefined;
  const names = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
  const segment = (name: string) =>
    urlText(
      fc.oneof(
        hostileString(KNOWN),
        fromSchema((paramsSchema?.properties as Record<string, object> | undefined)?.[name] ?? { type: 'string' }, KNOWN).map(asText),
      ),
    );
  return fc
    .record({
      method: fc.oneof(
        { weight: 5, arbitrary: fc.constant(route.method.toUpperCase()) },
        { weight: 1, arbitrary: fc.constantFrom(...METHODS) },
      ),
      segments: fc.tuple(...names.map(segment)),
      query: queryString(querySchema, KNOWN),
      body: bodyText(bodySchema, KNOWN),
      contentType: fc.constantFrom(
        'application/json',
        'application/json',
        'text/plain',
        'application/json; charset=utf-16',
        'application/x-www-form-urlencoded',
      ),
    })
    .map(({ method, segments, query, body, contentType }) => {
      let i = 0;
      const path = route.path.replace(/:([A-Za-z0-9_]+)/g, () => segments[i++] ?? '');
      return { method, url: `${path}${query}`, ...(body !== undefined ? { body } : {}), headers: { 'content-type': contentType } };
    });
}

const fcOptions = () => ({
  numRuns: RUNS,
  interruptAfterTimeLimit: SECONDS * 1000,
  ...(SEED !== undefined ? { seed: SEED } : {}),
});

describe('REST API under hostile input', () => {
  it('covers every operation of the route table', () => {
    expect(routes.length).toBeGreaterThan(10);
    expect(new Set(routes.map((r) => r.operationId)).size).toBe(routes.length);
  });

  it('never answers 5xx, always with the JSON error body, and changes no existing connection', async () => {
    const before = await snapshot();
    const request = fc.constantFrom(...routes).chain(restRequest);
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        check(await send(r.method, r.url, { body: r.body, headers: r.headers, key: env.secretKey }));
      }),
      fcOptions(),
    );
    expect(await snapshot()).toEqual(before);
  }, 180_000);

  it('answers 405 with Allow for every method a path of the route table does not serve', async () => {
    const matches = (path: string, url: string) => new RegExp(`^${path.replace(/:[A-Za-z0-9_]+/g, '[^/]+')}$`).test(url);
    for (const path of new Set(routes.map((r) => r.path))) {
      const url = path.replace(/:([A-Za-z0-9_]+)/g, 'fuzz-405');
      // `/connections/metadata` is also `/connections/:connectionId`: every path the URL matches serves it.
      const methods = new Set(routes.filter((r) => matches(r.path, url)).map((r) => r.method.toUpperCase()));
      for (const method of ['PUT', 'PATCH', 'DELETE', 'POST', 'GET'].filter((m) => !methods.has(m))) {
        const res = await api.call(method, url, method === 'GET' ? {} : { body: {} });
        expect({ method, path, status: res.status, code: res.body?.error?.code }).toEqual({
          method,
          path,
          status: 405,
          code: 'method_not_allowed',
        });
        const allow = res.headers.get('allow')!.split(', ');
        for (const m of methods) expect(allow).toContain(m);
        expect(allow).not.toContain(method);
      }
    }
  });
});

describe('Connect API and OAuth callback under hostile input', () => {
  let token: string;
  beforeAll(async () => {
    const res = await api.call('POST', '/connect/sessions', { body: { end_user: { id: 'fuzz-end-user' } } });
    expect(res.status).toBe(201);
    token = res.body.data.token;
  });

  it('never answers 5xx on /connect/api/*, always with the JSON error body, and changes no existing connection', async () => {
    const before = await snapshot();
    const path = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom('/connect/api/session', '/connect/api/oauth/start', '/connect/api/forms') },
      { weight: 1, arbitrary: urlText(hostileString()).map((s) => `/connect/api/${s}`) },
    );
    const body = fc.oneof(
      fromSchema(
        {
          type: 'object',
          properties: {
            integration: { type: 'string' },
            values: { type: 'object', additionalProperties: { type: 'string' } },
            connectionConfig: { type: 'object', additionalProperties: { type: 'string' } },
          },
          required: ['integration'],
        },
        [...KNOWN, 'apiKey', 'subdomain'],
      ).map((v) => JSON.stringify(v) ?? 'null'),
      bodyText(undefined, KNOWN),
    );
    const auth = fc.oneof(
      { weight: 4, arbitrary: fc.constant(() => `Bearer ${token}`) },
      { weight: 1, arbitrary: hostileString().map((s) => () => `Bearer ${s.replace(/[^\x20-\x7e]/g, '')}`) },
      { weight: 1, arbitrary: fc.constant(() => `Bearer ${token.slice(0, -2)}xx`) },
      { weight: 1, arbitrary: fc.constant(() => '') },
    );
    const request = fc.record({ method: fc.constantFrom('GET', 'POST', 'POST', 'PUT', 'DELETE'), path, body, auth });
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const authorization = r.auth();
        check(await send(r.method, r.path, { body: r.body, headers: authorization ? { authorization } : {} }));
      }),
      { ...fcOptions(), numRuns: Math.ceil(RUNS / 2), interruptAfterTimeLimit: (SECONDS * 1000) / 2 },
    );
    expect(await snapshot()).toEqual(before);
  }, 120_000);

  it('never answers 5xx on /oauth/callback with garbage query strings', async () => {
    const query = fc
      .array(
        fc.tuple(
          fc.oneof(
            fc.constantFrom('state', 'code', 'error', 'error_description', 'oauth_token', 'oauth_verifier'),
            hostileString().map(encodeURIComponentSafe),
          ),
          urlText(fc.oneof(hostileString(), fc.base64String({ maxLength: 400 }))),
        ),
        { maxLength: 5 },
      )
      .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        const res = await fetch(`${api.url}/oauth/callback?${q}`);
        await res.text();
        if (res.status >= 500) throw new Error(`/oauth/callback?${q.slice(0, 300)} answered ${res.status}`);
      }),
      { ...fcOptions(), numRuns: Math.ceil(RUNS / 3), interruptAfterTimeLimit: (SECONDS * 1000) / 3 },
    );
  }, 120_000);
});

function encodeURIComponentSafe(s: string): string {
  return s.isWellFormed() ? encodeURIComponent(s) : '%ZZ';
}
