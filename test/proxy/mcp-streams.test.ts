/**
 * The proxy speaking MCP's Streamable HTTP, with real peers: an MCP server built with the official
 * SDK (McpServer + StreamableHTTPServerTransport behind the SDK's bearer-token check,
 * dev/peers/mcp-server.ts) as the provider, the SDK's Client (StreamableHTTPClientTransport pointed at
 * Latchkey's proxy with the Environment's secret key) as the application, oidc-provider as the token
 * endpoint. Two tenants (namespaces with their own Environment) share one Latchkey server whose idle
 * limit is 2 s (LATCHKEY_PROXY_IDLE_SECONDS); a second server adds a 3 s maximum duration.
 */
import { randomBytes } from 'node:crypto';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { startMcpServer, type McpTestServer } from '../../dev/peers/mcp-server.js';
import { startOidcServer, type OidcTestServer } from '../../dev/peers/oidc-server.js';
import { startReplica, type Replica } from '../support/replica.js';

const CLIENT = { clientId: 'mcp-client', clientSecret: 'mcp-client-secret' };
const suffix = randomBytes(3).toString('hex');
const HEALTHY = `mcp-${suffix}`;
const HOSTILE = `mcp-hostile-${suffix}`;
const RESUMABLE = `mcp-resumable-${suffix}`;

let kc: KubeConfig;
let oidc: OidcTestServer;
/** The healthy server: SSE keep-alive comments every 500 ms, a gate after each part of `parts`. */
let mcp: McpTestServer;
/** The hostile one: no keep-alive, so a stream that does not answer sends nothing at all. */
let hostile: McpTestServer;
/** No keep-alive either, but with event IDs: its client resumes a stream ended at the idle limit. */
let resumable: McpTestServer;
let latchkey: Replica;
/** The same namespaces behind a server with a maximum stream duration of 3 s. */
let capped: Replica;
const namespaces: Array<{ name: string; delete(): Promise<void> }> = [];
let tenantA: TestEnvironment;
let tenantB: TestEnvironment;
/** Access tokens the MCP servers refuse. */
const revoked = new Set<string>();
/** What the `parts` tool awaits after each part (a test's gate); by default nothing. */
let partGate: (part: number) => Promise<void> = () => Promise.resolve();
const openClients: Client[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  kc = testKubeConfig();
  oidc = await startOidcServer({ clients: [CLIENT] });
  const acceptToken = (t: string) => t.length > 0 && !revoked.has(t);
  mcp = await startMcpServer({ acceptToken, keepAliveMs: 500, afterPart: (part) => partGate(part) });
  hostile = await startMcpServer({ acceptToken, keepAliveMs: 0 });
  resumable = await startMcpServer({ acceptToken, keepAliveMs: 0, resumable: true });
  for (const prefix of ['mcp-a', 'mcp-b']) namespaces.push(await createTestNamespace(kc, prefix));
  tenantA = await createEnvironment(kc, namespaces[0]!.name);
  tenantB = await createEnvironment(kc, namespaces[1]!.name);
  const names = namespaces.map((n) => n.name);
  latchkey = await startReplica(kc, { namespaces: names, config: { proxyIdleSeconds: 2 } });
  capped = await startReplica(kc, { namespaces: names, config: { proxyIdleSeconds: 2, proxyStreamMaxSeconds: 3 } });
  for (const [name, server] of [
    [HEALTHY, mcp],
    [HOSTILE, hostile],
    [RESUMABLE, resumable],
  ] as const)
    await applyProvider(kc, name, {
      displayName: 'MCP test server',
      authMode: 'OAUTH2',
      authorizationUrl: oidc.authorizationUrl,
      tokenUrl: oidc.tokenUrl,
      proxy: { baseUrl: server.origin },
    });
  for (const ns of names) {
    await createIntegration(kc, ns, 'mcp', { provider: HEALTHY }, CLIENT);
    await createIntegration(kc, ns, 'hostile', { provider: HOSTILE }, CLIENT);
    await createIntegration(kc, ns, 'resumable', { provider: RESUMABLE }, CLIENT);
  }
  for (const replica of [latchkey, capped])
    await eventually(() =>
      names.every(
        (ns) =>
          replica.ctx.catalog.listEnvironments(ns).length > 0 &&
          replica.ctx.catalog.getReferencedSecret(ns, 'test-keys') &&
          replica.ctx.catalog.getIntegration(ns, 'hostile') &&
          replica.ctx.catalog.getIntegration(ns, 'resumable') &&
          replica.ctx.catalog.getReferencedSecret(ns, 'mcp-client') &&
          replica.ctx.catalog.getProvider(HOSTILE) &&
          replica.ctx.catalog.getProvider(RESUMABLE) &&
          replica.ctx.catalog.getProvider(HEALTHY),
      ),
    );
});

afterAll(async () => {
  for (const client of openClients) await client.close().catch(() => {});
  await capped?.stop();
  await latchkey?.stop();
  await deleteProvider(kc, HEALTHY);
  await deleteProvider(kc, HOSTILE);
  await deleteProvider(kc, RESUMABLE);
  for (const ns of namespaces) await ns.delete();
  await mcp?.close();
  await hostile?.close();
  await resumable?.close();
  await oidc?.close();
});

/** An OAUTH2 connection with tokens from the OAuth server (`revoke`: the MCP servers refuse its access token). */
async function connection(env: TestEnvironment, integration: string, connectionId: string, revoke = false): Promise<string> {
  const minted = await oidc.mintTokens({ clientId: CLIENT.clientId });
  if (revoke) revoked.add(minted.accessToken);
  await latchkey.ctx.connections.createConnection({
    namespace: env.namespace,
    spec: {
      integration,
      provider: { mcp: HEALTHY, hostile: HOSTILE, resumable: RESUMABLE }[integration]!,
      connectionId,
      authMode: 'OAUTH2',
    },
    credentials: {
      type: 'OAUTH2',
      access_token: minted.accessToken,
      refresh_token: minted.refreshToken,
      expires_at: new Date(Date.now() + 3600_000).toISOString(),
      raw: {},
    },
  });
  for (const replica of [latchkey, capped])
    await eventually(() => replica.ctx.connections.findConnection(env.namespace, integration, connectionId));
  return minted.accessToken;
}

const latchkeyHeaders = (env: TestEnvironment, integration: string, connectionId: string) => ({
  authorization: `Bearer ${env.secretKey}`,
  'connection-id': connectionId,
  'provider-config-key': integration,
});

/** The SDK's client, as an application uses it through Latchkey: the proxy's URL and Latchkey's headers. */
async function connectClient(
  env: TestEnvironment,
  integration: string,
  connectionId: string,
  through: Replica = latchkey,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${through.url}/proxy/mcp`), {
    requestInit: { headers: latchkeyHeaders(env, integration, connectionId) },
  });
  const client = new Client({ name: 'latchkey-test-app', version: '1.0.0' });
  await client.connect(transport);
  openClients.push(client);
  return { client, transport };
}

interface StreamedAnswer {
  status: number;
  contentType?: string;
  body: string;
  /** 'end': the answer ended cleanly; 'error': it was cut. */
  ending: 'end' | 'error';
}

/** A request to the proxy's MCP endpoint by hand, for what the SDK's client does not do (pause, resume, read a cut). */
function proxyRequest(
  method: 'GET' | 'POST',
  headers: Record<string, string>,
  onResponse: (res: IncomingMessage) => void,
  through: Replica = latchkey,
): ClientRequest {
  const url = new URL(`${through.url}/proxy/mcp`);
  return request({ host: url.hostname, port: url.port, method, path: url.pathname, headers }, onResponse);
}

/** A raw JSON-RPC POST through the proxy in an existing session, read to its end (or its cut). */
function rawPost(through: Replica, headers: Record<string, string>, message: object): Promise<StreamedAnswer> {
  return new Promise((resolve, reject) => {
    const req = proxyRequest(
      'POST',
      { ...headers, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      (res) => {
        let body = '';
        const answer = (ending: 'end' | 'error') =>
          resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body, ending });
        res.on('data', (c: Buffer) => (body += c.toString('utf8')));
        res.on('end', () => answer('end'));
        res.on('error', () => answer('error'));
        res.on('aborted', () => answer('error'));
      },
      through,
    );
    req.on('error', reject);
    req.end(JSON.stringify(message));
  });
}

async function streamsEnded(replica: Replica, limit: string): Promise<number> {
  const metric = replica.ctx.metrics.getSingleMetric('latchkey_proxy_streams_ended_total');
  if (!metric) return 0;
  const values = (await metric.get()).values as Array<{ labels: Record<string, string>; value: number }>;
  return values.filter((v) => v.labels.limit === limit).reduce((n, v) => n + v.value, 0);
}

describe('the proxy and MCP Streamable HTTP', () => {
  it('tools/list, and a tool answering in parts: each part reaches the client before the tool goes on', async () => {
    const token = await connection(tenantA, 'mcp', 'parts');
    const { client } = await connectClient(tenantA, 'mcp', 'parts');
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name).sort()).toEqual(['big', 'hang', 'parts']);

    // The tool sends part N, then waits until the client has it (up to 5 s). Buffered anywhere on the
    // way, a part would reach the client only with the result, after every wait ran out.
    const received: number[] = [];
    const waitedOut: number[] = [];
    partGate = async (part) => {
      for (let waited = 0; !received.includes(part); waited += 20) {
        if (waited >= 5000) {
          waitedOut.push(part);
          return;
        }
        await sleep(20);
      }
    };
    try {
      const result = await client.callTool({ name: 'parts', arguments: { count: 4, delayMs: 0 } }, undefined, {
        onprogress: (p) => received.push(p.progress),
      });
      expect(result.content).toEqual([{ type: 'text', text: '4 parts' }]);
    } finally {
      partGate = () => Promise.resolve();
    }
    expect(received).toEqual([1, 2, 3, 4]);
    expect(waitedOut).toEqual([]);
    // Every request went out with the connection's token, never Latchkey's secret key.
    const auth = new Set(mcp.requests.filter((r) => r.authorization?.includes(token) || r.authorization?.includes(tenantA.secretKey)));
    expect([...auth].every((r) => r.authorization === `Bearer ${token}`)).toBe(true);
  });

  it('Mcp-Session-Id and MCP-Protocol-Version pass both ways; DELETE ends the session', async () => {
    await connection(tenantA, 'mcp', 'session');
    const { client, transport } = await connectClient(tenantA, 'mcp', 'session');
    await client.listTools();
    const sessionId = transport.sessionId;
    expect(sessionId).toBeDefined();
    expect(mcp.sessions).toContain(sessionId);
    const inSession = mcp.requests.filter((r) => r.sessionId === sessionId);
    const list = inSession.find((r) => r.rpc === 'tools/list');
    expect(list?.protocolVersion).toBe(transport.protocolVersion);
    expect(list?.protocolVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/);

    await transport.terminateSession();
    expect(mcp.closedSessions).toContain(sessionId);
    expect(mcp.requests.filter((r) => r.sessionId === sessionId).at(-1)?.method).toBe('DELETE');
  });

  it('the GET stream stays open past the idle limit while the server keeps it alive, and carries what the server sends', async () => {
    await connection(tenantA, 'mcp', 'get-stream');
    const { client, transport } = await connectClient(tenantA, 'mcp', 'get-stream');
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    const sessionId = transport.sessionId;
    await eventually(() => mcp.requests.some((r) => r.method === 'GET' && r.sessionId === sessionId));
    // Twice the idle limit: only the SDK server's keep-alive comments cross the stream meanwhile.
    await sleep(4500);
    mcp.notifyToolsChanged();
    await eventually(() => changed > 0);
    expect(mcp.requests.filter((r) => r.method === 'GET' && r.sessionId === sessionId)).toHaveLength(1);

    // Last-Event-ID (resuming a stream) goes to the server as sent, beside the session's headers.
    const resumed = await new Promise<number>((resolve, reject) => {
      proxyRequest(
        'GET',
        {
          ...latchkeyHeaders(tenantA, 'mcp', 'get-stream'),
          accept: 'text/event-stream',
          'mcp-session-id': sessionId!,
          'mcp-protocol-version': transport.protocolVersion!,
          'last-event-id': 'event-7',
        },
        (res) => {
          resolve(res.statusCode ?? 0);
          res.destroy();
        },
      )
        .on('error', reject)
        .end();
    });
    expect(resumed).toBeGreaterThan(0);
    const resume = mcp.requests.filter((r) => r.method === 'GET' && r.sessionId === sessionId).at(-1);
    expect(resume?.lastEventId).toBe('event-7');
    expect(resume?.protocolVersion).toBe(transport.protocolVersion);
  });

  it('an answer of several MiB in SSE events passes whole (no response-size bound cuts a stream)', async () => {
    await connection(tenantA, 'mcp', 'big');
    const { client } = await connectClient(tenantA, 'mcp', 'big');
    let bytes = 0;
    let parts = 0;
    const result = await client.callTool({ name: 'big', arguments: { parts: 48, bytes: 64 * 1024 } }, undefined, {
      onprogress: (p) => {
        parts++;
        bytes += p.message?.length ?? 0;
      },
    });
    expect(result.content).toEqual([{ type: 'text', text: '48 x 65536 bytes' }]);
    expect(parts).toBe(48);
    expect(bytes).toBe(48 * 64 * 1024);
  });

  it('back-pressure: a caller that does not read holds the server back; then it gets every byte', async () => {
    await connection(tenantA, 'mcp', 'slow-reader');
    const MIB = 64;
    const answer = await new Promise<{ writtenWhilePaused: number; received: number; doneWhilePaused: boolean }>((resolve, reject) => {
      const req = proxyRequest(
        'POST',
        { ...latchkeyHeaders(tenantA, 'mcp', 'slow-reader'), accept: 'text/event-stream', 'content-type': 'application/json' },
        (res) => {
          // Nothing read for a second: the server may fill the sockets' buffers on the way, no more.
          res.pause();
          setTimeout(() => {
            const writtenWhilePaused = mcp.firehose.written;
            const doneWhilePaused = mcp.firehose.done;
            let received = 0;
            res.on('data', (c: Buffer) => (received += c.length));
            res.on('end', () => resolve({ writtenWhilePaused, received, doneWhilePaused }));
            res.on('error', reject);
            res.resume();
          }, 1000);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'firehose/stream', params: { mib: MIB } }));
    });
    expect(answer.doneWhilePaused).toBe(false);
    expect(answer.writtenWhilePaused).toBeLessThan((MIB / 2) * 2 ** 20);
    expect(answer.received).toBe(MIB * 2 ** 20);
    expect(mcp.firehose.done).toBe(true);
  });

  it("a client that goes away closes the server's stream", async () => {
    await connection(tenantA, 'mcp', 'leaves');
    const { client, transport } = await connectClient(tenantA, 'mcp', 'leaves');
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    partGate = () => Promise.race([released, sleep(20_000)]).then(() => {});
    const leftBefore = mcp.leftEarly.filter((m) => m === 'tools/call').length;
    try {
      const call = client
        .callTool({ name: 'parts', arguments: { count: 3, delayMs: 0 } }, undefined, {
          // The first part arrived: the application closes its transport (its fetches are aborted).
          onprogress: () => void transport.close(),
        })
        .catch((err: unknown) => err);
      await eventually(() => mcp.leftEarly.filter((m) => m === 'tools/call').length > leftBefore, 10_000);
      await call;
    } finally {
      release();
      partGate = () => Promise.resolve();
    }
  });

  it('a 401 from the server: one refresh and one retry, before anything reached the client', async () => {
    const old = await connection(tenantA, 'mcp', 'revoked', true);
    const before = oidc.refreshCalls();
    const { client } = await connectClient(tenantA, 'mcp', 'revoked');
    expect((await client.listTools()).tools.length).toBe(3);
    expect(oidc.refreshCalls() - before).toBe(1);
    const fresh = latchkey.ctx.connections.getConnection(tenantA.namespace, 'mcp', 'revoked')?.credentials.access_token;
    expect(fresh).toBeDefined();
    expect(fresh).not.toBe(old);
    const initializes = mcp.requests.filter(
      (r) => r.rpc === 'initialize' && (r.authorization === `Bearer ${old}` || r.authorization === `Bearer ${fresh}`),
    );
    expect(initializes.map((r) => r.authorization)).toEqual([`Bearer ${old}`, `Bearer ${fresh}`]);
  });

  it('a stream the server breaks after its first event is not retried (Retries asked for or not)', async () => {
    await connection(tenantA, 'mcp', 'broken');
    const before = oidc.refreshCalls();
    const sent = mcp.requests.filter((r) => r.method === 'POST' && r.rpc === 'broken/stream').length;
    const answer = await rawPost(
      latchkey,
      { ...latchkeyHeaders(tenantA, 'mcp', 'broken'), retries: '3' },
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'broken/stream',
      },
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('"progress":1');
    expect(answer.ending).toBe('error');
    expect(mcp.requests.filter((r) => r.method === 'POST' && r.rpc === 'broken/stream').length - sent).toBe(1);
    expect(oidc.refreshCalls() - before).toBe(0);
  });

  it("a hostile server's stream that sends nothing is ended at the idle limit; another tenant's calls go on meanwhile", async () => {
    await connection(tenantA, 'hostile', 'endless');
    await connection(tenantB, 'mcp', 'neighbour');
    const a = await connectClient(tenantA, 'hostile', 'endless');
    const b = await connectClient(tenantB, 'mcp', 'neighbour');
    const endedBefore = await streamsEnded(latchkey, 'idle');
    const leftBefore = hostile.leftEarly.filter((m) => m === 'tools/call').length;

    const hung = rawPost(
      latchkey,
      {
        ...latchkeyHeaders(tenantA, 'hostile', 'endless'),
        'mcp-session-id': a.transport.sessionId!,
        'mcp-protocol-version': a.transport.protocolVersion!,
      },
      { jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name: 'hang', arguments: {} } },
    );
    await eventually(() => hostile.requests.some((r) => r.rpc === 'tools/call' && r.sessionId === a.transport.sessionId));
    // Tenant B, while tenant A's stream hangs.
    const progress: number[] = [];
    expect((await b.client.listTools()).tools.length).toBe(3);
    const result = await b.client.callTool({ name: 'parts', arguments: { count: 2, delayMs: 0 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(result.content).toEqual([{ type: 'text', text: '2 parts' }]);
    expect(progress).toEqual([1, 2]);
    expect(hostile.leftEarly.filter((m) => m === 'tools/call').length).toBe(leftBefore);

    const answer = await hung;
    // An event stream ends cleanly at the limit (its client may reconnect); the server's side is closed.
    expect(answer.status).toBe(200);
    expect(answer.contentType).toMatch(/^text\/event-stream/);
    expect(answer.ending).toBe('end');
    expect(answer.body).not.toContain('"id":99');
    await eventually(() => hostile.leftEarly.filter((m) => m === 'tools/call').length > leftBefore);
    expect(await streamsEnded(latchkey, 'idle')).toBeGreaterThan(endedBefore);
  });

  it("a tool's stream silent past the idle limit is ended cleanly; the SDK's client resumes it with Last-Event-ID and gets the rest", async () => {
    await connection(tenantB, 'resumable', 'resumes');
    const { client, transport } = await connectClient(tenantB, 'resumable', 'resumes');
    const endedBefore = await streamsEnded(latchkey, 'idle');
    const progress: number[] = [];
    // Part 1 at once, then 5 s of silence (the limit is 2 s), then part 2 and the result.
    const result = await client.callTool({ name: 'parts', arguments: { count: 2, delayMs: 5000 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(result.content).toEqual([{ type: 'text', text: '2 parts' }]);
    expect(progress).toEqual([1, 2]);
    expect(await streamsEnded(latchkey, 'idle')).toBeGreaterThan(endedBefore);
    const resumedBy = resumable.requests.filter((r) => r.method === 'GET' && r.sessionId === transport.sessionId && r.lastEventId);
    expect(resumedBy.length).toBeGreaterThan(0);
  });

  it('a stream still going at the maximum duration is ended (when the operator sets one)', async () => {
    await connection(tenantB, 'mcp', 'long');
    const { transport } = await connectClient(tenantB, 'mcp', 'long', capped);
    const leftBefore = mcp.leftEarly.filter((m) => m === 'tools/call').length;
    // 12 parts 500 ms apart: never idle for 2 s, but 6 s long.
    const answer = await rawPost(
      capped,
      {
        ...latchkeyHeaders(tenantB, 'mcp', 'long'),
        'mcp-session-id': transport.sessionId!,
        'mcp-protocol-version': transport.protocolVersion!,
      },
      {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'parts', arguments: { count: 12, delayMs: 500 }, _meta: { progressToken: 'long' } },
      },
    );
    expect(answer.ending).toBe('end');
    expect(answer.body).toContain('"progress":1');
    expect(answer.body).not.toContain('"progress":12');
    expect(answer.body).not.toContain('12 parts');
    await eventually(() => mcp.leftEarly.filter((m) => m === 'tools/call').length > leftBefore);
    expect(await streamsEnded(capped, 'max_duration')).toBeGreaterThan(0);
  });
});
