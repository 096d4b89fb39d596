/**
 * The MCP stream benchmark's client in its own process (forked with an IPC channel): the SDK's Client
 * over StreamableHTTPClientTransport. Each `{ url, headers, calls, parts, delayMs }` message connects
 * once, calls the `parts` tool `calls` times one after the other, and is answered with each call's
 * time to its first part (a progress notification) and to its result, in ms, as this process sees them.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

interface Run {
  url: string;
  headers: Record<string, string>;
  calls: number;
  parts: number;
  delayMs: number;
}

async function run(r: Run): Promise<{ firstMs: number[]; totalMs: number[] }> {
  const transport = new StreamableHTTPClientTransport(new URL(r.url), { requestInit: { headers: r.headers } });
  const client = new Client({ name: 'latchkey-bench', version: '1.0.0' });
  await client.connect(transport);
  const firstMs: number[] = [];
  const totalMs: number[] = [];
  try {
    for (let i = 0; i < r.calls; i++) {
      const t0 = process.hrtime.bigint();
      let first: bigint | undefined;
      const result = await client.callTool({ name: 'parts', arguments: { count: r.parts, delayMs: r.delayMs } }, undefined, {
        onprogress: () => void (first ??= process.hrtime.bigint()),
      });
      const t1 = process.hrtime.bigint();
      if (result.isError || first === undefined) throw new Error('the tool did not answer in parts');
      firstMs.push(Number(first - t0) / 1e6);
      totalMs.push(Number(t1 - t0) / 1e6);
    }
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close();
  }
  return { firstMs, totalMs };
}

process.on('message', (m: Run) => {
  run(m).then(
    (figures) => process.send!({ ok: true, ...figures }),
    (err: unknown) => process.send!({ ok: false, error: String((err as Error).message) }),
  );
});
process.on('disconnect', () => process.exit(0));
