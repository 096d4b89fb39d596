/**
 * A peer that answers a huge body (100 MB by default), written lazily with backpressure: it writes only
 * as fast as the client reads. `stats()` says how much it wrote and whether the client closed the
 * connection before the end, which shows a bounded reader stopped early instead of reading it whole.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface EndlessStats {
  written: number;
  /** The connection closed before the whole body was written. */
  cutShort: boolean;
  finished: boolean;
}

const CHUNK = Buffer.alloc(64 * 1024, 'a');

/** A handler answering `total` bytes (`head` first, then filler); `contentLength` sends the true length. */
export function endlessAnswer(
  opts: { total?: number; head?: string; contentType?: string; contentLength?: boolean; status?: number } = {},
) {
  const total = opts.total ?? 100 * 1024 * 1024;
  const calls: EndlessStats[] = [];
  const handler = (_req: IncomingMessage, res: ServerResponse) => {
    const stats: EndlessStats = { written: 0, cutShort: false, finished: false };
    calls.push(stats);
    res.writeHead(opts.status ?? 200, {
      'content-type': opts.contentType ?? 'application/json',
      ...(opts.contentLength ? { 'content-length': String(total) } : {}),
    });
    res.on('close', () => {
      stats.cutShort = !stats.finished;
    });
    const head = Buffer.from(opts.head ?? '{"access_token":"');
    const write = (): void => {
      while (!res.destroyed) {
        if (stats.written >= total) {
          stats.finished = true;
          res.end();
          return;
        }
        const chunk = stats.written === 0 ? head : CHUNK.subarray(0, Math.min(CHUNK.length, total - stats.written));
        stats.written += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', write);
          return;
        }
      }
    };
    write();
  };
  return {
    handler,
    calls,
    /** The last call's figures. */
    last: (): EndlessStats | undefined => calls[calls.length - 1],
  };
}
