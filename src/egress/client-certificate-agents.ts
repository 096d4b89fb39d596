/**
 * Connection pools that present a client certificate (mutual TLS), one per certificate: a TLS
 * connection's certificate is chosen at its handshake, so a pool's connections cannot be shared between
 * certificates. Each pool's connections go through the egress guard like every other (./connector.ts).
 * Keyed by a digest of the certificate and key (neither is kept as a key); the least recently used
 * pool is closed past `max`, so a rotated certificate's pool does not linger.
 */
import { createHash } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { ClientCertificate } from '../domain/client-certificate.js';

export class ClientCertificateAgents<D extends Dispatcher> {
  private readonly pools = new Map<string, D>();
  /** Each certificate object's digest: the catalog hands out one object per Secret version, so a proxied call hashes nothing. */
  private readonly ids = new WeakMap<ClientCertificate, string>();

  constructor(
    private readonly make: (certificate: ClientCertificate) => D,
    private readonly max = 32,
  ) {}

  /** The pool presenting `certificate` (made on first use). */
  get(certificate: ClientCertificate): D {
    let id = this.ids.get(certificate);
    if (id === undefined) {
      id = createHash('sha256').update(certificate.cert).update('\0').update(certificate.key).digest('base64url');
      this.ids.set(certificate, id);
    }
    let pool = this.pools.get(id);
    if (pool) {
      // Most recently used last: a Map iterates in insertion order.
      this.pools.delete(id);
    } else {
      pool = this.make(certificate);
      const oldest = this.pools.size >= this.max ? this.pools.keys().next().value : undefined;
      if (oldest !== undefined) {
        void this.pools
          .get(oldest)!
          .close()
          .catch(() => {});
        this.pools.delete(oldest);
      }
    }
    this.pools.set(id, pool);
    return pool;
  }

  get size(): number {
    return this.pools.size;
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.close().catch(() => {})));
  }

  destroy(): void {
    for (const pool of this.pools.values()) void pool.destroy().catch(() => {});
    this.pools.clear();
  }
}
