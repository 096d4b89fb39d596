/**
 * Mandrill (issue #57, part 4): an API that takes its key in the JSON body of every call (`proxy.body`), through
 * Latchkey's real Connect form, credential check, proxy and a real API server, against the loopback simulator
 * written from Mailchimp Transactional's docs (test/support/simulators/mandrill.ts). The typed key is checked with
 * users/ping carrying it in a JSON body (Mandrill's documented 401 `Invalid_Key` refuses it); proxied calls get the
 * connection's key set in the caller's JSON object, the rest of the object sent as written (Nango's SDK used as
 * Nango documents it); a body that is not one JSON object, too large, or a GET is answered 4xx and nothing reaches
 * Mandrill; the key appears in no log line, error or metric.
 */
import { Nango } from '@nangohq/node';
import { request } from 'node:http';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, type TestEnvironment } from '../../dev/fixtures.js';
import { DEFAULT_REPLAY_LIMIT } from '../../src/proxy/request-body.js';
import { catalogSpec } from '../support/catalog-files.js';
import { captureLogs } from '../support/log-capture.js';
import { startReplica, type Replica } from '../support/replica.js';
import { mandrill, INVALID_KEY } from '../support/simulators/mandrill.js';
import { startSimulators, type SimulatorHost } from '../support/simulators/framework.js';

const kc = testKubeConfig();
const sim = mandrill();
const logs = captureLogs();
const WRONG_KEY = 'md-wrongwrongwrong';
let host: SimulatorHost;
let ns: { name: string; delete(): Promise<void> };
let env: TestEnvironment;
let latchkey: Replica;
let connectionId: string;

beforeAll(async () => {
  host = await startSimulators([sim]);
  ns = await createTestNamespace(kc, 'mandrill');
  env = await createEnvironment(kc, ns.name, { mode: 'development' });
  await applyProvider(kc, 'mandrill', catalogSpec('mandrill'));
  await createIntegration(kc, ns.name, 'mandrill', { provider: 'mandrill' });
  latchkey = await startReplica(kc, {
    namespaces: [ns.name],
    components: ['server'],
    key: env.secretKey,
    egress: host.egressGuard(),
    logger: logs.logger,
  });
  await eventually(
    () =>
      latchkey.ctx.catalog.listEnvironments(ns.name).length > 0 &&
      latchkey.ctx.catalog.getProvider('mandrill') &&
      latchkey.ctx.catalog.getIntegration(ns.name, 'mandrill'),
  );
}, 120_000);

afterAll(async () => {
  await latchkey?.stop();
  await ns?.delete();
  await host?.close();
});

async function submitKey(endUser: string, apiKey: string) {
  const session = await latchkey.call('POST', '/connect/sessions', {
    body: { end_user: { id: endUser }, allowed_integrations: ['mandrill'] },
  });
  expect(session.status).toBe(201);
  const res = await fetch(`${latchkey.url}/connect/api/forms`, {
    method: 'POST',
    headers: { authorization: `Bearer ${session.body.data.token as string}`, 'content-type': 'application/json' },
    body: JSON.stringify({ integration: 'mandrill', values: { apiKey } }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const proxyHeaders = () => ({ 'connection-id': connectionId, 'provider-config-key': 'mandrill' });
const requestsSince = (before: number) => sim.state.requests.slice(before);

describe('Mandrill: the key in the JSON body', () => {
  it('checks a typed key with users/ping, the key in a JSON body: Invalid_Key (401) refuses it, nothing stored', async () => {
    const before = sim.state.requests.length;
    const res = await submitKey('sender-1', WRONG_KEY);
    expect([res.status, res.body.error.code]).toEqual([400, 'invalid_credentials']);
    expect(res.body.error.message).toBe('Mandrill (Mailchimp Transactional) refused this API key.');
    const [ping] = requestsSince(before);
    expect([ping!.method, ping!.path]).toEqual(['POST', '/api/1.0/users/ping.json']);
    expect(ping!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(ping!.body)).toEqual({ key: WRONG_KEY });
    expect(latchkey.ctx.connectionScans.listConnections(ns.name)).toEqual([]);
  });

  it('stores a key Mandrill accepts', async () => {
    const before = sim.state.requests.length;
    const res = await submitKey('sender-1', sim.key);
    expect(res.status).toBe(201);
    expect(requestsSince(before).map((r) => JSON.parse(r.body))).toEqual([{ key: sim.key }]);
    const conn = await eventually(() =>
      latchkey.ctx.connectionScans.listConnections(ns.name).find((c) => c.spec.endUser?.id === 'sender-1'),
    );
    connectionId = conn.spec.connectionId;
    expect(latchkey.ctx.connections.getConnection(ns.name, 'mandrill', connectionId)?.credentials).toMatchObject({
      type: 'API_KEY',
      apiKey: sim.key,
    });
  });

  it("sends messages/send with the connection's key set in the caller's object, the rest as written (Nango's SDK)", async () => {
    const nango = new Nango({ host: latchkey.url, secretKey: env.secretKey });
    const before = sim.state.requests.length;
    const message = { subject: 'Your receipt', from_email: 'shop@example.com', to: [{ email: 'ada@example.com', type: 'to' }] };
    const res = await nango.post({
      providerConfigKey: 'mandrill',
      connectionId,
      endpoint: '/1.0/messages/send.json',
      data: { message, async: false },
    });
    expect(res.status).toBe(200);
    expect(res.data).toEqual([{ email: 'ada@example.com', status: 'sent', reject_reason: null, _id: expect.any(String) }]);
    const [sent] = requestsSince(before);
    expect([sent!.method, sent!.path]).toEqual(['POST', '/api/1.0/messages/send.json']);
    expect(JSON.parse(sent!.body)).toEqual({ key: sim.key, message, async: false });
    expect(Number(sent!.headers['content-length'])).toBe(Buffer.byteLength(sent!.body));
  });

  it('keeps every member as the caller wrote it (a number past 2^53, escapes, nesting), replaces a key the caller sent, recomputes Content-Length', async () => {
    const before = sim.state.requests.length;
    // A key of the caller's own, once plainly and once escaped: the connection's replaces both.
    const raw =
      '{ "key" : "md-callers-own", "message": {"to": [{"email": "b\\u00e9a@example.com"}], "metadata": {"order": 12345678901234567890, "key": "inner"}},' +
      ' "k\\u0065y": "md-again", "send_at": "2026-12-24 10:00:00" }';
    const res = await latchkey.call('POST', '/proxy/1.0/messages/send.json', { rawBody: raw, headers: proxyHeaders() });
    expect(res.status).toBe(200);
    const [sent] = requestsSince(before);
    expect(sent!.body).toBe(
      `{"key":${JSON.stringify(sim.key)},"message": {"to": [{"email": "b\\u00e9a@example.com"}], "metadata": {"order": 12345678901234567890, "key": "inner"}},` +
        '"send_at": "2026-12-24 10:00:00"}',
    );
    expect(Number(sent!.headers['content-length'])).toBe(Buffer.byteLength(sent!.body));
    expect(sent!.headers['transfer-encoding']).toBeUndefined();
  });

  it('makes a body of the key alone for a call without one (users/ping), and sends a chunked body with a length', async () => {
    let before = sim.state.requests.length;
    const ping = await latchkey.call('POST', '/proxy/1.0/users/ping.json', { headers: proxyHeaders() });
    expect([ping.status, ping.body]).toEqual([200, 'PONG!']);
    const [sent] = requestsSince(before);
    expect([sent!.headers['content-type'], sent!.body]).toEqual(['application/json', JSON.stringify({ key: sim.key })]);

    // A body of unknown length (Transfer-Encoding: chunked) goes out with a Content-Length.
    before = sim.state.requests.length;
    const chunked = await rawProxy('POST', '/proxy/1.0/users/ping.json', { 'content-type': 'application/json; charset=utf-8' }, [
      '{"a"',
      ':1}',
    ]);
    expect(chunked.status).toBe(200);
    const [again] = requestsSince(before);
    expect(again!.body).toBe(`{"key":${JSON.stringify(sim.key)},"a":1}`);
    expect([again!.headers['content-length'], again!.headers['transfer-encoding']]).toEqual([
      String(Buffer.byteLength(again!.body)),
      undefined,
    ]);
  });

  it("passes Mandrill's own Invalid_Key answer back as it is when the stored key was revoked", async () => {
    const revoked = 'revoked-user';
    const imported = await latchkey.call('POST', '/connections', {
      body: { provider_config_key: 'mandrill', connection_id: revoked, credentials: { type: 'API_KEY', apiKey: WRONG_KEY } },
    });
    expect(imported.status).toBe(201);
    const res = await latchkey.call('POST', '/proxy/1.0/users/ping.json', {
      headers: { 'connection-id': revoked, 'provider-config-key': 'mandrill' },
    });
    expect([res.status, res.body]).toEqual([401, INVALID_KEY]);
  });

  it.each([
    ['text that is not JSON', { 'content-type': 'application/json' }, 'not json', 400, 'invalid_json_body'],
    ['a JSON array', { 'content-type': 'application/json' }, '[{"key":"x"}]', 400, 'json_body_not_object'],
    ['a JSON string', { 'content-type': 'application/json' }, '"hello"', 400, 'json_body_not_object'],
    ['null', { 'content-type': 'application/json' }, 'null', 400, 'json_body_not_object'],
    ['a form body', { 'content-type': 'application/x-www-form-urlencoded' }, 'key=x&a=1', 415, 'unsupported_media_type'],
    ['a body without a content type', {}, '{"a":1}', 415, 'unsupported_media_type'],
    ['JSON in another charset', { 'content-type': 'application/json; charset=utf-16' }, '{"a":1}', 415, 'unsupported_media_type'],
  ])('refuses %s with a 4xx and sends Mandrill nothing', async (_what, headers, body, status, code) => {
    const before = sim.state.requests.length;
    const res = await rawProxy('POST', '/proxy/1.0/messages/send.json', { ...headers, 'content-length': String(Buffer.byteLength(body)) }, [
      body,
    ]);
    expect([res.status, res.body.error.code]).toEqual([status, code]);
    expect(typeof res.body.error.message).toBe('string');
    expect(JSON.stringify(res.body)).not.toContain(sim.key);
    expect(sim.state.requests.length).toBe(before);
  });

  it('refuses a body over the proxy replay limit (413), declared or streamed, and a GET (400); sends nothing', async () => {
    const before = sim.state.requests.length;
    const big = JSON.stringify({ message: { html: 'x'.repeat(DEFAULT_REPLAY_LIMIT) } });
    const declared = await latchkey.call('POST', '/proxy/1.0/messages/send.json', { rawBody: big, headers: proxyHeaders() });
    expect([declared.status, declared.body.error.code]).toEqual([413, 'payload_too_large']);
    const streamed = await rawProxy('POST', '/proxy/1.0/messages/send.json', { 'content-type': 'application/json' }, [
      big.slice(0, 1000),
      big.slice(1000),
    ]);
    expect([streamed.status, streamed.body.error.code]).toEqual([413, 'payload_too_large']);
    const get = await latchkey.call('GET', '/proxy/1.0/users/ping.json', { headers: proxyHeaders() });
    expect([get.status, get.body.error.code]).toEqual([400, 'json_body_required']);
    expect(sim.state.requests.length).toBe(before);
  });

  it('keeps the key out of every log line, error answer and metric', async () => {
    expect(logs.lines.length).toBeGreaterThan(0);
    expect(logs.leaks([sim.key, WRONG_KEY])).toEqual([]);
    const metrics = await fetch(`${latchkey.url}/metrics`).then((r) => r.text());
    expect(metrics).toContain('provider="mandrill"');
    expect(metrics).not.toContain(sim.key);
  });
});

/** A proxied request written by hand: its chunks as given (no Content-Length unless in `headers`: chunked). */
function rawProxy(method: string, path: string, headers: Record<string, string>, chunks: string[]): Promise<{ status: number; body: any }> {
  const url = new URL(path, latchkey.url);
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { ...headers, ...proxyHeaders(), authorization: `Bearer ${env.secretKey}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined });
        } catch (err) {
          reject(err as Error);
        }
      });
    });
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}
