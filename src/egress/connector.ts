/**
 * undici's connector through the egress guard: each new connection resolves its host with the guard
 * and connects to the checked address, so nothing looks the name up again (no DNS rebinding between
 * check and connect). TLS keeps the host name as SNI and for the certificate check. Used by every
 * undici Agent of Latchkey's outgoing requests: `fetch` (token calls, webhooks) and the proxy.
 */
import { buildConnector } from 'undici';
import type { EgressGuard } from './guard.js';

/** `ca`: the trusted certificates (tests with their own CA; default: the guard's); the system's CAs otherwise. */
export function guardedConnector(guard: EgressGuard, tls: { ca?: string | Buffer } = {}): buildConnector.connector {
  const ca = tls.ca ?? guard.ca;
  const connectTo = buildConnector(ca ? { ca } : {});
  return (opts, callback) => {
    guard.resolve(opts.hostname).then(
      (checked) =>
        connectTo(
          { ...opts, hostname: checked.address, servername: opts.servername ?? (checked.isName ? checked.host : undefined) },
          callback,
        ),
      (err: Error) => callback(err, null),
    );
  };
}
