/**
 * node:http(s) Agents whose sockets go through the egress guard: `createConnection` resolves the
 * host with the guard and connects to the checked address, so node never looks the name up again.
 * TLS keeps the host name as SNI and for certificate verification.
 */
import { Agent as HttpAgent, type AgentOptions, type ClientRequestArgs } from 'node:http';
import { Agent as HttpsAgent, type AgentOptions as HttpsAgentOptions } from 'node:https';
import type { Duplex } from 'node:stream';
import type { EgressGuard } from './guard.js';

type Callback = (err: Error | null, stream: Duplex) => void;

function guardedCreateConnection(
  guard: EgressGuard,
  create: (options: ClientRequestArgs, callback?: Callback) => Duplex | null | undefined,
): (options: ClientRequestArgs, callback?: Callback) => undefined {
  return (options, callback) => {
    const host = options.hostname ?? options.host ?? 'localhost';
    guard.resolve(host).then(
      (checked) => {
        let socket: Duplex | null | undefined;
        try {
          const servername = (options as { servername?: string }).servername ?? (checked.isName ? checked.host : undefined);
          socket = create({ ...options, host: checked.address, hostname: checked.address, servername } as ClientRequestArgs);
        } catch (err) {
          callback?.(err as Error, undefined as unknown as Duplex);
          return;
        }
        callback?.(null, socket!);
      },
      (err: Error) => callback?.(err, undefined as unknown as Duplex),
    );
    // The socket arrives through the callback (asynchronous createConnection, see node's Agent docs).
    return undefined;
  };
}

export class GuardedHttpAgent extends HttpAgent {
  constructor(guard: EgressGuard, opts: AgentOptions = {}) {
    super(opts);
    this.createConnection = guardedCreateConnection(guard, HttpAgent.prototype.createConnection.bind(this));
  }
}

export class GuardedHttpsAgent extends HttpsAgent {
  constructor(guard: EgressGuard, opts: HttpsAgentOptions = {}) {
    super(opts);
    this.createConnection = guardedCreateConnection(guard, HttpsAgent.prototype.createConnection.bind(this));
  }
}
