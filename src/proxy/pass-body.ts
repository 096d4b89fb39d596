/**
 * The provider's body on its way to the caller once the headers went out: decoded, written whole (most
 * API answers arrived with their headers), or passed on as it arrives (streams), within the stream limits
 * (stream-limits.ts). Never throws: a body that fails after its headers ends the caller's response.
 */
import type { ServerResponse } from 'node:http';
import type { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Logger } from '../platform/log.js';
import type { proxyStreamsEnded } from './metrics.js';
import { isEventStream, limitDuration, streamLimitOf } from './stream-limits.js';
import type { UpstreamResponse } from './upstream-response.js';

export interface PassBodyOptions {
  decoder: Transform | undefined;
  /** The maximum duration of an answer still streaming (0: none). */
  streamMaxMs: number;
  provider: string;
  logger: Logger;
  streamsEnded: ReturnType<typeof proxyStreamsEnded>;
}

export async function passBody(response: UpstreamResponse, res: ServerResponse, opts: PassBodyOptions): Promise<void> {
  // Headers go out at once when no body byte is there yet (a provider streaming slowly, server-sent
  // events); otherwise node sends them with the first body bytes, in one write instead of two.
  if (response.nothingYet) res.flushHeaders();
  const clearDuration = limitDuration(response, opts.streamMaxMs);
  try {
    if (opts.decoder) await pipeline(response.stream(), opts.decoder, res);
    // Most API answers arrived whole with their headers: one write of headers and body.
    else if (response.complete) res.end(response.receivedBody() ?? undefined);
    else await response.sendTo(res);
  } catch (err) {
    const limit = streamLimitOf(err);
    if (limit) opts.streamsEnded.inc({ provider: opts.provider, limit });
    // An event stream stopped at a limit ends cleanly (its client reconnects); a decoder's pipeline has destroyed `res` already.
    if (limit && isEventStream(response) && !res.destroyed) {
      opts.logger.info({ provider: opts.provider, limit }, 'proxied event stream ended at its limit');
      res.end();
    } else {
      // Headers are gone; the caller sees a truncated response. Say why in the logs only.
      opts.logger.warn(
        { provider: opts.provider, status: response.statusCode, limit, err: (err as Error).message },
        'proxied response ended early',
      );
      res.destroy();
    }
  } finally {
    clearDuration();
  }
}
