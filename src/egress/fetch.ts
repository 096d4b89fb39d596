/**
 * A `fetch` whose every connection goes through the egress guard: an undici Agent whose connector
 * resolves the host with the guard and connects to the checked address (TLS still verifies the
 * certificate against the host name). Redirects, when a caller follows them, open their
 * connections through the same connector, so every hop is checked. A request that carries a client
 * certificate ({@link withClientCertificate}) goes through a pool presenting it (mutual TLS).
 */
import { Agent, fetch as undiciFetch } from 'undici';
import type { ClientCertificate } from '../domain/client-certificate.js';
import { ClientCertificateAgents } from './client-certificate-agents.js';
import { guardedConnector } from './connector.js';
import { egressRefusal, type EgressGuard } from './guard.js';

/** Where a request's client certificate rides in its `RequestInit` (a symbol: it passes wrappers and is never sent). */
const CLIENT_CERTIFICATE = Symbol('latchkey.clientCertificate');

/** `init` whose connection presents `certificate` (when the server asks for one); `init` itself without one. */
export function withClientCertificate(init: RequestInit, certificate: ClientCertificate | undefined): RequestInit {
  return certificate ? ({ ...init, [CLIENT_CERTIFICATE]: certificate } as RequestInit) : init;
}

export interface GuardedFetch {
  fetch: typeof fetch;
  close(): Promise<void>;
}

/** `ca`: extra trusted certificates (tests with their own CA); the system's CAs otherwise. */
export function createGuardedFetch(guard: EgressGuard, tls: { ca?: string | Buffer } = {}): GuardedFetch {
  const agent = new Agent({ connect: guardedConnector(guard, tls) });
  const certified = new ClientCertificateAgents(
    (clientCertificate) => new Agent({ connect: guardedConnector(guard, { ...tls, clientCertificate }) }),
  );
  const guarded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    let res: Awaited<ReturnType<typeof undiciFetch>>;
    const certificate = (init as { [CLIENT_CERTIFICATE]?: ClientCertificate } | undefined)?.[CLIENT_CERTIFICATE];
    try {
      // Node's own fetch cannot use a dispatcher from the undici package (their versions differ),
      // so the package's fetch is used and its answer handed back as a global Response.
      res = await undiciFetch(input instanceof Request ? input.url : input, {
        ...(input instanceof Request ? { method: input.method, headers: input.headers, body: input.body, duplex: 'half' } : {}),
        ...(init as object),
        dispatcher: certificate ? certified.get(certificate) : agent,
      } as Parameters<typeof undiciFetch>[1]);
    } catch (err) {
      // A refusal is a decision, not a network failure: callers and logs see it as such.
      throw egressRefusal(err) ?? err;
    }
    return new Response(res.body as ReadableStream | null, {
      status: res.status,
      statusText: res.statusText,
      headers: Array.from(res.headers),
    });
  };
  return { fetch: guarded as typeof fetch, close: () => Promise.all([agent.close(), certified.close()]).then(() => {}) };
}
