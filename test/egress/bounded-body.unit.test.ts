/**
 * The bounded reader of providers' answers (src/egress/bounded-body.ts): the limit exactly and one
 * byte past it, a Content-Length over the limit refused before reading, a Content-Length that lies,
 * a chunked body cancelled at the limit, and the bounded answer libraries read themselves.
 */
import { createServer } from 'node:http';
import { eventually } from '../../dev/cluster.js';
import {
  boundAnswer,
  boundedFetch,
  readAnswerBytes,
  readAnswerForm,
  readAnswerJson,
  readAnswerText,
} from '../../src/egress/bounded-body.js';
import { listenOnLoopback, type LoopbackServer } from '../support/servers/loopback.js';
import { endlessAnswer } from '../support/servers/endless-answer.js';

/** A body given in chunks; `cancelled` tells whether the reader cancelled it. */
function chunked(chunks: string[], headers: Record<string, string> = {}) {
  const state = { cancelled: false, pulled: 0 };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks[state.pulled++];
      if (next === undefined) controller.close();
      else controller.enqueue(new TextEncoder().encode(next));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { res: new Response(body, { headers }), state };
}

describe('readAnswer*', () => {
  it('reads a body of exactly the limit', async () => {
    expect(await readAnswerText(new Response('x'.repeat(100)), 100)).toBe('x'.repeat(100));
    expect((await readAnswerBytes(new Response(''), 100)).byteLength).toBe(0);
  });

  it('refuses one byte past the limit with provider_answer_too_large', async () => {
    const err = await readAnswerText(new Response('x'.repeat(101)), 100).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'upstream', code: 'provider_answer_too_large' });
  });

  it('refuses a Content-Length over the limit before reading a byte', async () => {
    const { res, state } = chunked(['{}'], { 'content-length': '5000' });
    await expect(readAnswerJson(res, 100)).rejects.toMatchObject({ code: 'provider_answer_too_large' });
    expect(state.pulled).toBe(0);
    expect(state.cancelled).toBe(true);
  });

  it('counts the bytes, not a Content-Length that says less', async () => {
    const { res, state } = chunked(
      Array.from({ length: 10 }, () => 'x'.repeat(60)),
      { 'content-length': '10' },
    );
    await expect(readAnswerText(res, 100)).rejects.toMatchObject({ code: 'provider_answer_too_large' });
    expect(state.cancelled).toBe(true);
    // The second chunk passes the limit (the stream may have pulled one more ahead).
    expect(state.pulled).toBeLessThanOrEqual(3);
  });

  it('stops a chunked body at the limit and cancels the rest', async () => {
    const { res, state } = chunked(Array.from({ length: 1000 }, () => 'y'.repeat(50)));
    await expect(readAnswerText(res, 1000)).rejects.toMatchObject({ code: 'provider_answer_too_large' });
    expect(state.pulled).toBeLessThan(30);
    expect(state.cancelled).toBe(true);
  });

  it('reads JSON and forms within the limit', async () => {
    expect(await readAnswerJson(new Response('{"a":1}'))).toEqual({ a: 1 });
    expect((await readAnswerForm(new Response('oauth_token=t&oauth_token_secret=s'))).get('oauth_token_secret')).toBe('s');
    await expect(readAnswerJson(new Response('not json'))).rejects.toBeInstanceOf(SyntaxError);
  });
});

describe('boundAnswer', () => {
  it('makes a library reading the body itself fail at the limit, and readers use its limit', async () => {
    const { res, state } = chunked(Array.from({ length: 100 }, () => 'z'.repeat(50)));
    const bounded = boundAnswer(res, 200);
    await expect(bounded.text()).rejects.toMatchObject({ code: 'provider_answer_too_large' });
    expect(state.cancelled).toBe(true);
    // The limit travels with the answer: a reader without one uses it, not the default.
    await expect(readAnswerText(boundAnswer(new Response('w'.repeat(300)), 200))).rejects.toMatchObject({
      code: 'provider_answer_too_large',
    });
    expect(await readAnswerText(boundAnswer(new Response('w'.repeat(200)), 200))).toHaveLength(200);
  });

  it('throws at once on a Content-Length over the limit', () => {
    expect(() => boundAnswer(new Response('{}', { headers: { 'content-length': '999' } }), 100)).toThrow(
      "The provider's answer is larger than 100 bytes",
    );
  });
});

describe('boundedFetch against a loopback peer answering 100 MB', () => {
  let server: LoopbackServer;
  const endless = endlessAnswer();
  const withLength = endlessAnswer({ contentLength: true });
  beforeAll(async () => {
    server = await listenOnLoopback(
      createServer((req, res) => (req.url === '/length' ? withLength.handler(req, res) : endless.handler(req, res))),
    );
  });
  afterAll(() => server.close());

  it('closes the connection after about the limit: the peer never wrote the rest', async () => {
    const limited = boundedFetch(fetch, 1024 * 1024);
    const res = await limited(`${server.origin}/`);
    await expect(res.json()).rejects.toMatchObject({ code: 'provider_answer_too_large' });
    await eventually(() => endless.last()?.cutShort === true, 10_000, 20);
    expect(endless.last()!.written).toBeLessThan(20 * 1024 * 1024);
  });

  it('refuses a declared 100 MB before reading it', async () => {
    const limited = boundedFetch(fetch, 1024 * 1024);
    await expect(limited(`${server.origin}/length`)).rejects.toMatchObject({ code: 'provider_answer_too_large' });
    await eventually(() => withLength.last()?.cutShort === true, 10_000, 20);
    expect(withLength.last()!.written).toBeLessThan(20 * 1024 * 1024);
  });
});
