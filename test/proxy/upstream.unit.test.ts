/**
 * The proxy's requests to a provider (undici's dispatcher under src/proxy/upstream.ts), against real
 * HTTP servers on loopback: the wait for headers is bounded, a caller that leaves stops the request
 * (before the answer and in the middle of its body), an answer drained rather than passed on
 * leaves its connection in the pool, and a body not yet taken is held only up to a cap. No cluster needed.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { EgressGuard } from '../../src/egress/guard.js';
import { LatchkeyError } from '../../src/domain/errors.js';
import { Cancellation, createAgents, sendOnce, sendWithRetries, type UpstreamAgents } from '../../src/proxy/upstream.js';
import { endlessAnswer } from '../support/servers/endless-answer.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let provider: Server;
let base: string;
let handler: Handler;
let connections: number;
let agents: UpstreamAgents;

beforeAll(async () => {
  provider = createServer((req, res) => handler(req, res));
  provider.on('connection', () => (connections += 1));
  await new Promise<void>((r) => provider.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
});

afterAll(async () => {
  provider.closeAllConnections();
  await new Promise((r) => provider.close(r));
});

beforeEach(() => {
  connections = 0;
  agents = createAgents(new EgressGuard({ allow: ['127.0.0.1/32'] }));
});

afterEach(() => agents.destroy());

const get = (path: string, cancellation = new Cancellation(), headersTimeoutMs = 5_000) =>
  sendOnce({ method: 'GET', url: new URL(`${base}${path}`), headers: {}, body: { kind: 'none' } }, agents, cancellation, headersTimeoutMs);

/** Resolves when the provider's side of this request closes, with whether its answer was complete. */
const closed = (res: ServerResponse) => new Promise<boolean>((r) => res.once('close', () => r(res.writableFinished)));

it('an answer that came with its headers is complete at once; one drained instead keeps its connection', async () => {
  handler = (req, res) => {
    if (req.url === '/late') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.flushHeaders();
      setTimeout(() => res.end('late body'), 50);
    } else res.end(`whole ${req.url}`);
  };
  const whole = await get('/a');
  expect(whole.complete).toBe(true);
  expect(whole.receivedBody()?.toString()).toBe('whole /a');

  // undici frees a connection for the next request on a later turn of the event loop (as the next
  // caller's request arrives in the proxy); asked at once, it would open a second one.
  await new Promise((r) => setImmediate(r));
  const late = await get('/late');
  expect(late.complete).toBe(false);
  expect(late.nothingYet).toBe(true);
  late.drain();
  await new Promise((r) => setTimeout(r, 150));
  const again = await get('/b');
  expect(again.receivedBody()?.toString()).toBe('whole /b');
  expect(connections).toBe(1);
});

it('gives up waiting for the headers after headersTimeoutMs', async () => {
  let providerSide!: Promise<boolean>;
  handler = (_req, res) => (providerSide = closed(res));
  const t0 = Date.now();
  const err = await get('/silent', new Cancellation(), 300).catch((e: unknown) => e);
  expect(err).toMatchObject({ kind: 'upstream', code: 'provider_unreachable' });
  expect((err as Error).message).toMatch(/timeout/i);
  expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
  await expect(providerSide).resolves.toBe(false);
});

it('a caller that leaves before the answer stops the request', async () => {
  let providerSide!: Promise<boolean>;
  handler = (_req, res) => (providerSide = closed(res));
  const cancellation = new Cancellation();
  const pending = get('/held', cancellation);
  await new Promise((r) => setTimeout(r, 100));
  cancellation.cancel();
  await expect(pending).rejects.toMatchObject({ code: 'provider_unreachable' });
  await expect(providerSide).resolves.toBe(false);
});

it('a caller that leaves in the middle of the body stops the provider’s body too', async () => {
  let providerSide!: Promise<boolean>;
  handler = (_req, res) => {
    providerSide = closed(res);
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.write(Buffer.alloc(1024, 'a'));
    // The rest never comes: only the caller leaving ends this.
  };
  // A front server passing the answer on with sendTo, as the proxy does.
  let passed!: Promise<unknown>;
  const front = createServer((_req, res) => {
    void get('/stream').then((answer) => {
      res.writeHead(answer.statusCode, answer.rawHeaders);
      passed = answer.sendTo(res).then(
        () => 'ended',
        (e: Error) => e.message,
      );
    });
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  try {
    const socket = await new Promise<Socket>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: (front.address() as AddressInfo).port, path: '/' }, (res) => {
        res.once('data', () => resolve(req.socket!));
      });
      req.on('error', () => {});
      req.once('error', reject);
      req.end();
    });
    socket.destroy();
    await expect(providerSide).resolves.toBe(false);
    await expect(passed).resolves.toBe('the caller went away');
  } finally {
    front.closeAllConnections();
    await new Promise((r) => front.close(r));
  }
});

it('a body nobody has taken yet is held up to the cap, the provider waiting; streamed afterwards, it comes whole', async () => {
  const total = 48 * 1024 * 1024;
  const huge = endlessAnswer({ total, head: 'x' });
  handler = huge.handler;
  const answer = await get('/huge');
  // Held as long as a refresh might take: unread, the provider has written only what socket buffers take.
  await new Promise((r) => setTimeout(r, 1000));
  expect(huge.last()!.written).toBeLessThan(16 * 1024 * 1024);
  expect(huge.last()!.finished).toBe(false);

  let bytes = 0;
  for await (const chunk of answer.stream()) bytes += (chunk as Buffer).length;
  expect(bytes).toBe(total);
  expect(huge.last()!.finished).toBe(true);
});

it('a provider that cannot be reached is retried, then answered as provider_unreachable (502)', async () => {
  // A port that was just closed: connections to it are refused.
  const gone = createServer();
  await new Promise<void>((r) => gone.listen(0, '127.0.0.1', r));
  const port = (gone.address() as AddressInfo).port;
  await new Promise((r) => gone.close(r));
  const retries: string[] = [];
  const sent = sendWithRetries({ method: 'GET', url: new URL(`http://127.0.0.1:${port}/x`), headers: {}, body: { kind: 'none' } }, agents, {
    policy: { retries: 2, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 0 },
    cancellation: new Cancellation(),
    headersTimeoutMs: 5_000,
    now: () => Date.now(),
    onRetry: (reason) => retries.push(reason),
  });
  const err = await sent.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(retries).toEqual(['network_error', 'network_error']);
  expect(err).toBeInstanceOf(LatchkeyError);
  // The last attempt's failure answered anew, not passed on (it has no cause).
  expect((err as Error).cause).toBeUndefined();
  expect(err).toMatchObject({
    kind: 'upstream',
    code: 'provider_unreachable',
    message: expect.stringMatching(/^The provider could not be reached: /),
  });
});
