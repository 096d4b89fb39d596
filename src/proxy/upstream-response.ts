/**
 * A provider's response as undici's dispatcher delivers it (callbacks, no streams): status and raw
 * headers first, then the body's chunks. Most API answers arrive whole in the same read as their
 * headers; those are written back with one `end()`. A body still arriving is passed on chunk by
 * chunk with backpressure (the provider's socket is paused while the caller's is full), or through
 * a stream when it must be decoded. A response nobody wants (a retry, a 401 refreshed) is drained so
 * its connection is reused. While the proxy has not decided (a 401 waiting for a token refresh), at
 * most {@link HELD_BODY_MAX_BYTES} are kept; then the provider's socket waits.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { rawHeaderValue } from './headers.js';

type Controller = Dispatcher.DispatchController;

/**
 * Most body bytes kept in memory before the proxy knows where they go: a provider answering a 401 with
 * a huge or endless body must not grow memory for as long as the refresh takes. Past it the provider's
 * socket is paused until the body is sent on, streamed or thrown away.
 */
export const HELD_BODY_MAX_BYTES = 256 * 1024;

/** Where the body goes once the proxy has decided: nowhere yet (chunks kept), a caller, a stream, or away. */
type Sink =
  | { kind: 'held' }
  | { kind: 'caller'; res: ServerResponse; done: (err?: Error) => void }
  | { kind: 'stream'; stream: Readable }
  | { kind: 'drain' };

export class UpstreamResponse implements Dispatcher.DispatchHandler {
  statusCode = 0;
  statusMessage = '';
  /** Names and values as the provider sent them, in order (node's `rawHeaders` form). */
  rawHeaders: string[] = [];
  /** The body has ended (`complete` with no error). */
  complete = false;
  private controller: Controller | undefined;
  private chunks: Buffer[] = [];
  /** Bytes in `chunks`, compared with the cap while the body is held. */
  private heldBytes = 0;
  private sink: Sink = { kind: 'held' };
  private failure: Error | undefined;

  /**
   * `onStart`: the status and headers have arrived (the body may follow in the same read, before
   * any code awaiting the response runs). `onError`: the request failed before that.
   */
  constructor(
    private readonly onStart: (response: UpstreamResponse) => void,
    private readonly onError: (err: Error) => void,
  ) {}

  /** The first value of a response header (names compared without case). */
  header(name: string): string | undefined {
    return rawHeaderValue(this.rawHeaders, name);
  }

  /** Nothing of the body has arrived and it has not ended: a slow provider, or server-sent events. */
  get nothingYet(): boolean {
    return this.chunks.length === 0 && !this.complete;
  }

  /** Stops the request (the caller went away before the answer). */
  abort(reason: Error): void {
    this.controller?.abort(reason);
  }

  // ---- undici's side ----

  onRequestStart(controller: Controller): void {
    this.controller = controller;
  }

  onResponseStart(controller: Controller, statusCode: number, _headers: IncomingHttpHeaders, statusMessage?: string): void {
    // Informational answers (100 Continue, 103 Early Hints) are not the response.
    if (statusCode < 200) return;
    this.statusCode = statusCode;
    this.statusMessage = statusMessage ?? '';
    const raw = controller.rawHeaders;
    if (Array.isArray(raw)) {
      const list = new Array<string>(raw.length);
      for (let i = 0; i < raw.length; i++)
        list[i] = typeof raw[i] === 'string' ? (raw[i] as string) : (raw[i] as Buffer).toString('latin1');
      this.rawHeaders = list;
    }
    this.onStart(this);
  }

  onResponseData(controller: Controller, chunk: Buffer): void {
    const sink = this.sink;
    if (sink.kind === 'held') {
      this.chunks.push(chunk);
      if ((this.heldBytes += chunk.length) > HELD_BODY_MAX_BYTES) controller.pause();
    } else if (sink.kind === 'caller') this.writeTo(sink.res, chunk);
    else if (sink.kind === 'stream') {
      if (!sink.stream.push(chunk)) controller.pause();
    }
  }

  onResponseEnd(): void {
    this.complete = true;
    const sink = this.sink;
    if (sink.kind === 'caller') {
      sink.res.end();
      sink.done();
    } else if (sink.kind === 'stream') sink.stream.push(null);
  }

  onResponseError(_controller: Controller, err: Error): void {
    if (this.statusCode === 0) {
      this.onError(err);
      return;
    }
    this.failure = err;
    const sink = this.sink;
    if (sink.kind === 'caller') sink.done(err);
    else if (sink.kind === 'stream') sink.stream.destroy(err);
  }

  // ---- the proxy's side ----

  /** The whole body, for a response that has already ended (null when it had none). */
  receivedBody(): Buffer | null {
    const { chunks } = this;
    this.chunks = [];
    this.heldBytes = 0;
    if (chunks.length === 0) return null;
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  }

  /**
   * Writes the body to the caller's response as it arrives (what came before included), then ends it.
   * Rejects when the provider cuts the body or the caller goes away first; the other side is then stopped.
   */
  sendTo(res: ServerResponse): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.failure) {
        reject(this.failure);
        return;
      }
      let settled = false;
      const onClose = () => {
        if (settled || res.writableFinished) return;
        settled = true;
        const err = new Error('the caller went away');
        this.controller?.abort(err);
        reject(err);
      };
      const done = (err?: Error) => {
        if (settled) return;
        settled = true;
        res.off('close', onClose);
        if (err) reject(err);
        else resolve();
      };
      res.once('close', onClose);
      // Gone already (between the headers' arrival and now): 'close' will not come again.
      if (res.destroyed) {
        onClose();
        return;
      }
      const held = this.receivedBody();
      this.sink = { kind: 'caller', res, done };
      const taken = held === null || this.writeTo(res, held);
      if (this.complete) {
        res.end();
        done();
      } else if (taken) this.resumeHeld();
    });
  }

  /** Writes a chunk to the caller; the provider's side waits while the caller's is full (then false). */
  private writeTo(res: ServerResponse, chunk: Buffer): boolean {
    if (res.write(chunk)) return true;
    this.controller?.pause();
    res.once('drain', () => this.controller?.resume());
    return false;
  }

  /** Reads on from a provider paused at the held cap. */
  private resumeHeld(): void {
    if (this.controller?.paused) this.controller.resume();
  }

  /** The body as a stream (for a decoder), from its first byte, with backpressure on the provider. */
  stream(): Readable {
    const stream = new Readable({
      read: () => this.controller?.resume(),
      destroy: (err, callback) => {
        if (!this.complete) this.controller?.abort(err ?? new Error('the body was not read'));
        callback(err);
      },
    });
    const held = this.chunks;
    this.chunks = [];
    this.heldBytes = 0;
    for (const chunk of held) stream.push(chunk);
    if (this.failure) stream.destroy(this.failure);
    else if (this.complete) stream.push(null);
    else this.sink = { kind: 'stream', stream };
    return stream;
  }

  /**
   * Reads the rest of the body and throws it away, so the connection goes back to the pool. A body
   * that filled the held cap may be endless: that request is stopped (its connection closed) instead.
   */
  drain(): void {
    const overCap = this.heldBytes > HELD_BODY_MAX_BYTES;
    this.chunks = [];
    this.heldBytes = 0;
    this.sink = { kind: 'drain' };
    if (overCap && !this.complete) this.controller?.abort(new Error('a held body past the cap was not wanted'));
    else this.resumeHeld();
  }
}
