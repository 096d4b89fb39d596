/**
 * Issue #11 attack 9: bad input is a clear 4xx with the JSON error body, never a 500, and loses
 * nothing stored. The known cases, one by one, against a real control plane; the property-based
 * sweep over every operation is in fuzz.test.ts.
 */
import { testKubeConfig } from '../../dev/cluster.js';
import { startHostileBed, type HostileBed } from '../support/hostile-bed.js';
import type { Replica } from '../support/replica.js';

const kc = testKubeConfig();
let bed: HostileBed | undefined;
let api: Replica;

beforeAll(async () => {
  bed = await startHostileBed(kc, 'hostile', 'Hostile');
  ({ api } = bed);
});

afterAll(async () => {
  await bed?.close();
});

function expectError(res: { status: number; body: any; headers: Headers }, status: number, code?: string) {
  expect({ status: res.status, body: res.body }).toEqual({
    status,
    body: { error: expect.objectContaining({ code: code ?? expect.any(String), message: expect.any(String) }) },
  });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
}

describe('malformed paths', () => {
  it('answers 400 for malformed percent-encoding in a path parameter', async () => {
    expectError(await api.call('GET', '/connections/%ZZ?provider_config_key=keys'), 400, 'invalid_path');
    expectError(await api.call('DELETE', '/connections/%E0%A4?provider_config_key=keys'), 400, 'invalid_path');
    expectError(await api.call('POST', '/connection/%/metadata?provider_config_key=keys', { body: { a: 1 } }), 400, 'invalid_path');
  });

  it('answers 400 for a lone UTF-16 surrogate in a connection ID, in the path or the body', async () => {
    // %ED%A0%80 is U+D800 encoded as if it were a character: not UTF-8.
    expectError(await api.call('GET', '/connections/%ED%A0%80?provider_config_key=keys'), 400, 'invalid_path');
    const body = { provider_config_key: 'keys', connection_id: 'lone-\ud800', credentials: { type: 'API_KEY', apiKey: 'k' } };
    expectError(await api.call('POST', '/connections', { body }), 400, 'invalid_body');
    expectError(
      await api.call('POST', '/connections/metadata', { body: { connection_id: '\udc00', provider_config_key: 'keys', metadata: {} } }),
      400,
    );
    // A query string cannot carry one: its bytes are not UTF-8 and decode to U+FFFD.
    expect((await api.call('GET', '/connections?search=%ED%B0%80')).status).toBe(200);
    const list = await api.call('GET', '/connections');
    expect(list.body.connections.map((c: { connection_id: string }) => c.connection_id)).not.toContain('lone-\ufffd');
  });

  it('answers 400 for a lone surrogate in a JSON key', async () => {
    const body = {
      provider_config_key: 'keys',
      connection_id: 'meta-key',
      credentials: { type: 'API_KEY', apiKey: 'k' },
      metadata: { '\ud83d': 1 },
    };
    expectError(await api.call('POST', '/connections', { body }), 400, 'invalid_body');
  });

  it('answers 400 for JSON nested deeper than any real request', async () => {
    const deep = '['.repeat(5_000) + ']'.repeat(5_000);
    const raw = `{"provider_config_key":"keys","connection_id":"deep","credentials":{"type":"API_KEY","apiKey":"k"},"metadata":{"x":${deep}}}`;
    expectError(await api.call('POST', '/connections', { rawBody: raw }), 400, 'invalid_body');
    expect((await api.call('GET', '/connections/deep?provider_config_key=keys')).status).toBe(404);
  });
});

describe('numbers that overflow', () => {
  it('answers 400 for expires_in: 1e13 on POST /connection and stores nothing', async () => {
    const res = await api.call('POST', '/connection', {
      body: { provider_config_key: 'crm', connection_id: 'overflow', access_token: 'at', expires_in: 1e13 },
    });
    expectError(res, 400);
    expect(res.body.error.errors?.[0]?.path).toBe('body.expires_in');
    expect((await api.call('GET', '/connections/overflow?provider_config_key=crm')).status).toBe(404);
  });

  it('still accepts a long but representable lifetime', async () => {
    const res = await api.call('POST', '/connection', {
      body: { provider_config_key: 'crm', connection_id: 'ten-years', access_token: 'at', expires_in: 10 * 365 * 86_400 },
    });
    expect(res.status).toBe(201);
  });

  it('answers 400 for a huge page number in a list query', async () => {
    expectError(await api.call('GET', '/connections?limit=1e400'), 400, 'invalid_query');
    const res = await api.call('GET', '/connections?page=1e300&limit=10');
    expect(res.status).toBeLessThan(500);
  });
});

describe('methods and unknown paths', () => {
  /** `method` on `path` is a 405 with the JSON error body, and Allow names the path's methods. */
  async function expectNotAllowed(method: string, path: string, allow: string) {
    const res = await api.call(method, path);
    expectError(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toBe(allow);
  }

  it('answers 405 with Allow for a method a path does not support', async () => {
    await expectNotAllowed('PUT', '/connections', 'GET, HEAD, POST');
    await expectNotAllowed('PATCH', '/connections/some-id', 'DELETE, GET, HEAD');
    const providers = await api.call('DELETE', '/providers/x');
    expect(providers.headers.get('allow')).toBe('GET, HEAD');
  });

  it('answers 405 with Allow on the Connect API and the OAuth callback too', async () => {
    await expectNotAllowed('PUT', '/connect/api/session', 'GET, HEAD');
    await expectNotAllowed('GET', '/connect/api/oauth/start', 'POST');
    // POST is the form_post callback; PUT is not a method of the callback.
    expect((await api.call('PUT', '/oauth/callback')).headers.get('allow')).toBe('GET, HEAD, POST');
  });

  it('still answers 404 for an unknown path', async () => {
    expectError(await api.call('GET', '/no-such-path'), 404, 'route_not_found');
    expectError(await api.call('PUT', '/connections/a/b/c'), 404, 'route_not_found');
  });
});
