/**
 * undici's connector through the egress guard: each new connection resolves its host with the guard
 * and connects to the checked address, so nothing looks the name up again (no DNS rebinding between
 * check and connect). TLS keeps the host name as SNI and for the certificate check. Used by every
 * undici Agent of Latchkey's outgoing requests: `fetch` (token calls, webhooks) and the proxy.
 */
import { buildConnector } from 'undici';
import type { ClientCertificate } from '../domain/client-certificate.js';
import type { EgressGuard } from './guard.js';

export interface ConnectorTls {
  /** The trusted certificates (tests with their own CA; default: the guard's); the system's CAs otherwise. */
  ca?: string | Buffer;
  /** A client certificate every connection presents when the server asks for one (mutual TLS). */
  clientCertificate?: ClientCertificate;
}

export function guardedConnector(guard: EgressGuard, tls: ConnectorTls = {}): buildConnector.connector {
  const ca = tls.ca ?? guard.ca;
  const client = tls.clientCertificate;
  const connectTo = buildConnector({ ...(ca ? { ca } : {}), ...(client ? { cert: client.cert, key: client.key } : {}) });
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
