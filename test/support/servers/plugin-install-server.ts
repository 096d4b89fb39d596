/**
 * A hand-written loopback fake of a provider whose plugin the end user installs (INSTALL_PLUGIN): no
 * real server of this kind can run on loopback. What it does, and so what the tests verify:
 * - `GET /install?state&redirect_uri`: an install page (account field and a button), refusing a
 *   missing state or a redirect_uri other than the registered callback;
 * - `POST /install`: issues a fresh API key for the account and sends the browser back to the callback
 *   with `api_key`, `account_id`, `timestamp`, the state and the hex HMAC-SHA256 of them keyed with the
 *   shared signing secret (the same canonical string Latchkey checks);
 * - `GET /v1/me`: answers 200 only with `x-api-key` set to a key it issued (what the proxy must inject).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PluginInstallServer {
  origin: string;
  signingSecret: string;
  /** Keys issued, by account. */
  keys: Map<string, string>;
  /** Requests to /v1/me that carried no issued key. */
  rejections: string[];
  /** The canonical string and signature of a callback query (for the tests' forged callbacks). */
  sign(query: URLSearchParams, secret?: string): string;
  close(): Promise<void>;
}

function canonical(query: URLSearchParams): string {
  return [...query.entries()]
    .filter(([k]) => k !== 'signature')
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export async function startPluginInstallServer(opts: { callbackUrl: string }): Promise<PluginInstallServer> {
  const signingSecret = randomBytes(24).toString('hex');
  const keys = new Map<string, string>();
  const rejections: string[] = [];
  const sign = (query: URLSearchParams, secret = signingSecret) => createHmac('sha256', secret).update(canonical(query)).digest('hex');

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const send = (status: number, body: string, type = 'text/html') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    if (req.method === 'GET' && url.pathname === '/install') {
      const state = url.searchParams.get('state');
      const redirectUri = url.searchParams.get('redirect_uri');
      if (!state || redirectUri !== opts.callbackUrl) return send(400, 'bad install request');
      return send(
        200,
        `<!doctype html><form method="post" action="/install"><input name="account" value="">` +
          `<input type="hidden" name="state" value="${escape(state)}"><button type="submit">Install</button></form>`,
      );
    }
    if (req.method === 'POST' && url.pathname === '/install') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const account = form.get('account') || 'acct';
        const key = `pk_${randomBytes(16).toString('hex')}`;
        keys.set(account, key);
        const q = new URLSearchParams({
          api_key: key,
          account_id: account,
          timestamp: String(Math.floor(Date.now() / 1000)),
          state: form.get('state') ?? '',
        });
        q.set('signature', sign(q));
        res.writeHead(302, { location: `${opts.callbackUrl}?${q.toString()}` });
        res.end();
      });
      return;
    }
    if (req.method === 'GET' && url.pathname === '/v1/me') {
      const key = req.headers['x-api-key'];
      const account = [...keys.entries()].find(([, k]) => k === key)?.[0];
      if (!account) {
        rejections.push(String(key ?? ''));
        return send(401, JSON.stringify({ error: 'unknown key' }), 'application/json');
      }
      return send(200, JSON.stringify({ account }), 'application/json');
    }
    send(404, 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    signingSecret,
    keys,
    rejections,
    sign,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
