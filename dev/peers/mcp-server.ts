/**
 * A remote MCP server for the proxy's stream tests and benchmark, built with the official SDK
 * (`@modelcontextprotocol/sdk`): McpServer behind StreamableHTTPServerTransport (MCP's Streamable
 * HTTP: https://modelcontextprotocol.io/specification/2025-06-18/basic/transports and
 * /specification/2025-11-25/basic/transports), stateful (an `Mcp-Session-Id` per session, the GET
 * stream, DELETE), behind the SDK's `requireBearerAuth`. Records what reached it: each request's
 * method and MCP headers, each session opened and closed, each answer its client left before it ended.
 *
 * Tools:
 * - `parts {count, delayMs}`: a progress notification per part (each its own SSE event), waiting
 *   `delayMs` and then `opts.afterPart(part)` (a test's gate) between parts, then the result.
 * - `big {parts, bytes}`: `parts` progress notifications whose message is `bytes` long.
 * - `hang`: never answers (the stream stays open; with `keepAliveMs: 0` it sends nothing at all).
 *
 * Not the SDK's (it has no way to make these): a POST of the JSON-RPC method `broken/stream` is
 * answered by hand with an event stream whose connection is destroyed after its first event (a server
 * failing mid-stream); one of `firehose/stream` {mib} with `mib` MiB of events written as fast as the
 * connection takes them (waiting for 'drain'), counted in `firehose`.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';

export interface McpRequestSeen {
  method: string;
  /** The JSON-RPC method of a POST's message, when it was one message. */
  rpc?: string;
  authorization?: string;
  sessionId?: string;
  protocolVersion?: string;
  lastEventId?: string;
}

export interface McpServerOptions {
  /** Whether a bearer token is accepted (default: any non-empty one). */
  acceptToken?: (token: string) => boolean;
  /** The SDK's SSE keep-alive comment interval on open streams (0: none; the SDK's default is 15 s). */
  keepAliveMs?: number;
  /** Event IDs kept per session (the SDK's example store), so a client resumes a stream with `Last-Event-ID`. */
  resumable?: boolean;
  /** Awaited after each part of `parts` is sent. */
  afterPart?: (part: number) => Promise<void>;
}

export interface McpTestServer {
  origin: string;
  /** The MCP endpoint (`${origin}/mcp`). */
  url: string;
  requests: McpRequestSeen[];
  sessions: string[];
  closedSessions: string[];
  /** JSON-RPC methods of POSTs whose caller went away before the answer ended. */
  leftEarly: string[];
  /** Bytes of the last `firehose/stream` answer accepted by its connection so far, and whether all were. */
  firehose: { written: number; done: boolean };
  /** Sends `notifications/tools/list_changed` to every open session (on its GET stream). */
  notifyToolsChanged(): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startMcpServer(opts: McpServerOptions = {}): Promise<McpTestServer> {
  const acceptToken = opts.acceptToken ?? ((t: string) => t.length > 0);
  const requests: McpRequestSeen[] = [];
  const sessions: string[] = [];
  const closedSessions: string[] = [];
  const leftEarly: string[] = [];
  const firehose = { written: 0, done: false };
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const servers = new Map<string, McpServer>();

  const build = (): McpServer => {
    const mcp = new McpServer({ name: 'latchkey-test-mcp', version: '1.0.0' });
    mcp.registerTool(
      'parts',
      { description: 'Answers in parts', inputSchema: { count: z.number().int().min(1), delayMs: z.number().int().min(0) } },
      async ({ count, delayMs }, extra) => {
        const token = extra._meta?.progressToken;
        for (let part = 1; part <= count; part++) {
          if (token !== undefined)
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress: part, total: count },
            });
          if (delayMs) await sleep(delayMs);
          await opts.afterPart?.(part);
        }
        return { content: [{ type: 'text', text: `${count} parts` }] };
      },
    );
    mcp.registerTool(
      'big',
      { description: 'Large parts', inputSchema: { parts: z.number().int().min(1), bytes: z.number().int().min(1) } },
      async ({ parts, bytes }, extra) => {
        const token = extra._meta?.progressToken ?? 'big';
        for (let part = 1; part <= parts; part++)
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: part, total: parts, message: String(part % 10).repeat(bytes) },
          });
        return { content: [{ type: 'text', text: `${parts} x ${bytes} bytes` }] };
      },
    );
    mcp.registerTool('hang', { description: 'Never answers' }, (extra) => {
      return new Promise((resolve) =>
        extra.signal.addEventListener('abort', () => resolve({ content: [{ type: 'text', text: 'cancelled' }] })),
      );
    });
    return mcp;
  };

  const app = express();
  const auth = requireBearerAuth({
    verifier: {
      verifyAccessToken: (token) => {
        if (!acceptToken(token)) return Promise.reject(new InvalidTokenError('The access token is not valid'));
        return Promise.resolve({ token, clientId: 'latchkey', scopes: [], expiresAt: Math.floor(Date.now() / 1000) + 3600 });
      },
    },
  });
  // Recorded before the token check: what the proxy sent, whether or not it was accepted.
  app.use('/mcp', express.json({ limit: '1mb' }), (req, res, next) => {
    const body = req.body as { method?: unknown } | undefined;
    const rpc = req.method === 'POST' && typeof body?.method === 'string' ? body.method : undefined;
    requests.push({
      method: req.method,
      rpc,
      authorization: req.headers.authorization,
      sessionId: req.headers['mcp-session-id'] as string | undefined,
      protocolVersion: req.headers['mcp-protocol-version'] as string | undefined,
      lastEventId: req.headers['last-event-id'] as string | undefined,
    });
    res.on('close', () => {
      if (!res.writableFinished && rpc) leftEarly.push(rpc);
    });
    next();
  });
  app.all('/mcp', auth, async (req, res) => {
    if ((req.body as { method?: unknown } | undefined)?.method === 'broken/stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n');
      setTimeout(() => res.socket?.destroy(), 50);
      return;
    }
    const body = req.body as { method?: unknown; params?: { mib?: number } } | undefined;
    if (body?.method === 'firehose/stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const event = Buffer.from(`event: message\ndata: ${'x'.repeat(64 * 1024 - 23)}\n\n`);
      firehose.written = 0;
      firehose.done = false;
      for (let left = (body.params?.mib ?? 1) * 16; left > 0 && !res.destroyed; left--) {
        const more = res.write(event);
        firehose.written += event.length;
        if (!more) await new Promise((r) => res.once('drain', r).once('close', r));
      }
      firehose.done = true;
      res.end();
      return;
    }
    const sid = req.headers['mcp-session-id'] as string | undefined;
    let transport = sid ? transports.get(sid) : undefined;
    if (!transport) {
      if (sid || req.method !== 'POST') {
        res.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
        return;
      }
      const mcp = build();
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        keepAliveMs: opts.keepAliveMs,
        ...(opts.resumable ? { eventStore: new InMemoryEventStore() } : {}),
        onsessioninitialized: (id) => {
          sessions.push(id);
          transports.set(id, created);
          servers.set(id, mcp);
        },
        onsessionclosed: (id) => {
          closedSessions.push(id);
          transports.delete(id);
          servers.delete(id);
        },
      });
      transport = created;
      await mcp.connect(created);
    }
    await transport.handleRequest(req, res, req.body);
  });

  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: `${origin}/mcp`,
    requests,
    sessions,
    closedSessions,
    leftEarly,
    firehose,
    notifyToolsChanged: () => {
      for (const mcp of servers.values()) mcp.sendToolListChanged();
    },
    async close() {
      for (const t of transports.values()) await t.close().catch(() => {});
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
