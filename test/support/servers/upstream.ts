/** A real upstream HTTP server on 127.0.0.1 that records every request it gets (the proxy's target). */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The client's port: the same for requests sent over one kept-alive connection. */
  remotePort?: number;
}

export type UpstreamHandler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void | Promise<void>;

export interface Upstream {
  port: number;
  origin: string;
  requests: RecordedRequest[];
  /** Handler by path prefix (longest match wins); the default echoes the request as JSON. */
  on(prefix: string, handler: UpstreamHandler): void;
  /** Handler that takes over the raw request before its body is read (streaming tests). */
  onRaw(prefix: string, handler: (req: IncomingMessage, res: ServerResponse) => void): void;
  close(): Promise<void>;
}

export const echo: UpstreamHandler = (req, res, body) => {
  res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'yes' });
  res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: body.toString('utf8') }));
};

/** An upstream on 127.0.0.1 (or `host`), on a free port (or `port`). */
export async function startUpstream(at: { host?: string; port?: number } = {}): Promise<Upstream> {
  const host = at.host ?? '127.0.0.1';
  const requests: RecordedRequest[] = [];
  const handlers = new Map<string, UpstreamHandler>();
  const raw = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
  const match = <T>(map: Map<string, T>, url: string) =>
    [...map.keys()]
      .filter((p) => url.startsWith(p))
      .sort((a, b) => b.length - a.length)
      .map((p) => map.get(p)!)[0];
  const server: Server = createServer((req, res) => {
    const rawHandler = match(raw, req.url ?? '');
    if (rawHandler) {
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.alloc(0),
        remotePort: req.socket.remotePort,
      });
      rawHandler(req, res);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, remotePort: req.socket.remotePort });
      void Promise.resolve((match(handlers, req.url ?? '') ?? echo)(req, res, body)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((r) => server.listen(at.port ?? 0, host, r));
  const { port } = server.address() as { port: number };
  return {
    port,
    origin: `http://${host}:${port}`,
    requests,
    on: (prefix, handler) => void handlers.set(prefix, handler),
    onRaw: (prefix, handler) => void raw.set(prefix, handler),
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
