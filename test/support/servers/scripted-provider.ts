/**
 * A hand-written loopback OAuth 2 provider whose token endpoint and API answer exactly what a test
 * scripts, byte for byte: oidc-provider cannot answer as real providers do (Slack's `token_type: bot`,
 * `ok: false` in a 200, `authed_user`; `expires_in` as a string; form-encoded answers), so the tests
 * of those shapes use this. The authorization endpoint is never visited: tests build the callback
 * themselves from the state Latchkey put in the authorization URL.
 */
import { createServer } from 'node:http';
import { listenOnLoopback } from './loopback.js';

export interface ScriptedAnswer {
  status?: number;
  contentType?: string;
  body: string;
}

export interface ScriptedCall {
  method: string;
  path: string;
  authorization?: string;
  contentType?: string;
  body: string;
}

export interface ScriptedProvider {
  origin: string;
  authorizationUrl: string;
  tokenUrl: string;
  /** The token endpoint's (any path ending in /token) next answers, in order; when empty it answers 500. */
  tokenAnswers: ScriptedAnswer[];
  /** What each API path answers (until changed). */
  routes: Map<string, ScriptedAnswer>;
  /** Every request, in order (the token endpoint's too). */
  calls: ScriptedCall[];
  close(): Promise<void>;
}

export const json = (body: unknown, status = 200): ScriptedAnswer => ({
  status,
  contentType: 'application/json',
  body: JSON.stringify(body),
});

export async function startScriptedProvider(): Promise<ScriptedProvider> {
  const tokenAnswers: ScriptedAnswer[] = [];
  const routes = new Map<string, ScriptedAnswer>();
  const calls: ScriptedCall[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
      calls.push({
        method: req.method ?? '',
        path,
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        body: Buffer.concat(chunks).toString(),
      });
      const answer = path.endsWith('/token') ? (tokenAnswers.shift() ?? { status: 500, body: 'no answer scripted' }) : routes.get(path);
      if (!answer) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(answer.status ?? 200, { 'content-type': answer.contentType ?? 'application/json' }).end(answer.body);
    });
  });
  const site = await listenOnLoopback(server);
  return {
    origin: site.origin,
    authorizationUrl: `${site.origin}/authorize`,
    tokenUrl: `${site.origin}/token`,
    tokenAnswers,
    routes,
    calls,
    close: site.close,
  };
}
