/**
 * Connecting without a browser: an OAuth start answered on a simulated provider's own consent page (from the URL
 * Latchkey sent the browser to), and the Connect form submitted.
 */
import type { Replica } from './replica.js';
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

/**
 * The Connect form submitted for a new end user, with `session` a Connect session of theirs: the answer's status and
 * text, and the connection it stored in `namespace`, if any.
 */
export async function submitConnectForm(
  latchkey: Replica,
  namespace: string,
  form: {
    endUser: string;
    session: string;
    integration: string;
    values: Record<string, string>;
    connectionConfig?: Record<string, string>;
  },
) {
  const res = await fetch(`${latchkey.url}/connect/api/forms`, {
    method: 'POST',
    headers: { authorization: `Bearer ${form.session}`, 'content-type': 'application/json' },
    body: JSON.stringify({ integration: form.integration, values: form.values, connectionConfig: form.connectionConfig ?? {} }),
  });
  const text = await res.text();
  const connection = () => latchkey.ctx.connectionScans.listConnections(namespace).find((c) => c.spec.endUser?.id === form.endUser);
  return { status: res.status, text, connection };
}
