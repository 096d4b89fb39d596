/** A loopback webhook receiver that records every request and answers with scripted statuses. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { verifyWebhook } from '../../../src/webhooks/signing.js';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  json: Record<string, unknown>;
  status: number;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  /** Every request, including the ones answered with an error status. */
  received: ReceivedWebhook[];
  /** Requests answered 2xx. */
  delivered(): ReceivedWebhook[];
  /** Status answers to give, in order, before answering 200 (with optional headers). */
  answers: Array<{ status: number; headers?: Record<string, string> }>;
  /** While true, requests are recorded (status 0) and never answered: a receiver that hangs. */
  hanging: boolean;
  /** Called with each request before it is answered (a fault test kills the sender here). */
  onRequest?: (w: ReceivedWebhook) => void;
  /** Starts listening (on the same port after a close); does nothing while listening. */
  listen(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A loopback webhook receiver; `port` may be given to come back up on the same address, and `host`
 * to listen elsewhere (the e2e suite's receiver, on the local node's address for its pods).
 */
export async function webhookReceiver(port = 0, host = '127.0.0.1'): Promise<WebhookReceiver> {
  let server: Server | undefined;
  const r: WebhookReceiver = {
    url: '',
    port,
    received: [],
    answers: [],
    hanging: false,
    delivered: () => r.received.filter((w) => w.status < 300),
    async listen() {
      if (server) return;
      server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          if (r.hanging) {
            r.received.push({ headers: req.headers, body, json: parseJson(body), status: 0 });
            return;
          }
          const answer = r.answers.shift() ?? { status: 200 };
          const w = { headers: req.headers, body, json: parseJson(body), status: answer.status };
          r.received.push(w);
          r.onRequest?.(w);
          res.writeHead(answer.status, answer.headers ?? {}).end();
        });
      });
      await new Promise<void>((resolve) => server!.listen(r.port, host, resolve));
      r.port = (server.address() as { port: number }).port;
      r.url = `http://${host}:${r.port}/hooks`;
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (!server) return resolve();
        const closing = server;
        server = undefined;
        closing.close(() => resolve());
        closing.closeAllConnections();
      }),
  };
  return r;
}

function parseJson(body: string): Record<string, unknown> {
  try {
    return JSON.parse(body) as Record<string, unknown>;
  } catch {
    return {}; // recorded as is
  }
}

/** The `webhook-id` header of a request. */
export const webhookIdOf = (w: ReceivedWebhook): string => String(w.headers['webhook-id'] ?? '');

export function signatureValid(key: string, w: ReceivedWebhook): boolean {
  const h = Object.fromEntries(Object.entries(w.headers).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
  return verifyWebhook(key, h, w.body, Math.floor(Date.now() / 1000));
}
