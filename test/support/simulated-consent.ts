/**
 * An OAuth connect without a browser, against a simulated provider: Latchkey's Connect start, then the
 * simulator's own consent page answered from the URL Latchkey sent the browser to.
 */
import type { ServedSimulator } from './simulators/framework.js';

export interface SimulatedConsent {
  /** The authorization URL Latchkey sent the browser to. */
  authorization: URL;
  /** The consent page's allow link: the redirect back to Latchkey's callback. */
  allow: string;
  /** The Connect start's cookies, which the callback needs. */
  cookie: string;
}

export async function consentOnSimulator(
  latchkeyUrl: string,
  session: string,
  integration: string,
  sim: ServedSimulator,
  authorizePath: string,
): Promise<SimulatedConsent> {
  const start = await fetch(`${latchkeyUrl}/connect/api/oauth/start`, {
    method: 'POST',
    headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
    body: JSON.stringify({ integration, connectionConfig: {} }),
  });
  expect(start.status).toBe(200);
  const authorization = new URL(((await start.json()) as { data: { url: string } }).data.url);
  const cookie = start.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const authorize = sim.routes.find((route) => route.path === authorizePath)!;
  const page = await authorize.handler({
    method: 'GET',
    host: authorization.hostname,
    path: authorization.pathname,
    query: authorization.searchParams,
    headers: {},
    body: '',
    form: new URLSearchParams(),
  });
  const allow = /id="allow" href="([^"]+)"/.exec(page.body ?? '')![1]!.replace(/&amp;/g, '&');
  return { authorization, allow, cookie };
}
