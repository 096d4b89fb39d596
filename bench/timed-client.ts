/**
 * A client in its own process for the benchmark's one-at-a-time timed requests (the refresh on
 * fetch in bench/hot-paths.ts), forked with an IPC channel: each `{ url, headers }` message is sent
 * on one keep-alive connection and answered with `{ status, body, ms }`. The time is what a caller
 * in another process sees: the measured server's work after its answer (the status write, the
 * Lease's release) no longer delays the client's reading of that answer, as it did when the client
 * shared the server's event loop.
 */
import { Agent } from 'node:http';
import { timedRequest } from './timed-request.js';

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

process.on('message', (m: { url: string; headers?: Record<string, string> }) => {
  timedRequest({ url: new URL(m.url), headers: m.headers, agent, keepBody: true }).then(
    (r) => process.send!(r),
    (err: unknown) => process.send!({ status: 0, ms: 0, body: String((err as Error).message) }),
  );
});
process.on('disconnect', () => {
  agent.destroy();
  process.exit(0);
});
