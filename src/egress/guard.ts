/**
 * The egress guard: every connection Latchkey opens on behalf of a tenant or an end user (token
 * endpoints, OAuth 1 requests, proxied requests, webhooks, app installation tokens) asks it for the
 * address to connect to. It resolves the host once, refuses the whole name when any answer is an
 * address the operator did not allow (loopback, private, link-local, metadata...), and hands back
 * the checked address, which the caller connects to without looking the name up again (a second
 * lookup could answer differently: DNS rebinding).
 */
import { lookup } from 'node:dns/promises';
import { LatchkeyError } from '../domain/errors.js';
import { classify, formatIp, parseIp, type AddressClass } from './addresses.js';
import { EgressAllowlist } from './allowlist.js';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Name resolution, injectable (tests answer differently on each call to play DNS rebinding). */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

export interface CheckedAddress {
  /** The host as the URL named it (brackets removed). */
  host: string;
  /** The address to connect to: one of the resolver's answers (or the literal), checked. */
  address: string;
  family: 4 | 6;
  /** True when `host` was a name (TLS then sends it as SNI and checks the certificate against it). */
  isName: boolean;
}

/** Code on refusals, so callers can tell a policy refusal from a network error. */
export const EGRESS_REFUSED = 'EGRESS_REFUSED';

/** The egress policy refused an address (403 when uncaught: what was asked for, not a network failure). */
export class EgressRefusedError extends LatchkeyError {
  declare readonly code: typeof EGRESS_REFUSED;
  constructor(
    readonly host: string,
    readonly address: string,
    readonly addressClass: AddressClass,
  ) {
    const where = host === address ? address : `${host} (${address})`;
    super('forbidden', EGRESS_REFUSED, `egress refused: ${where} is a ${addressClass} address; only LATCHKEY_EGRESS_ALLOW can allow it`);
    this.name = 'EgressRefusedError';
  }
}

/** The refusal inside an error (fetch wraps connection errors in a TypeError's `cause`). */
export function egressRefusal(err: unknown): EgressRefusedError | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof EgressRefusedError) return e;
  }
  return undefined;
}

export interface EgressGuardOptions {
  /** CIDRs, addresses and host names that may be reached although they are not public. */
  allow?: readonly string[];
  resolve?: Resolver;
  /**
   * Certificates trusted instead of the system's CAs by every connection through this guard (tests
   * whose simulated providers serve HTTPS with their own CA); the system's CAs otherwise.
   */
  ca?: string;
}

export class EgressGuard {
  readonly allowlist: EgressAllowlist;
  /** See {@link EgressGuardOptions.ca}. */
  readonly ca: string | undefined;
  private readonly resolver: Resolver;

  constructor(opts: EgressGuardOptions = {}) {
    this.allowlist = new EgressAllowlist(opts.allow ?? []);
    this.resolver = opts.resolve ?? systemResolver;
    this.ca = opts.ca;
  }

  /**
   * The address to connect to for `host` (a URL's hostname: a name, an IPv4 address in any spelling
   * the URL standard accepts, or an IPv6 address with or without brackets). Rejects with
   * {@link EgressRefusedError} when the policy refuses it; resolver errors pass through.
   */
  async resolve(host: string): Promise<CheckedAddress> {
    const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
    const literal = parseIp(bare);
    if (literal) {
      const address = formatIp(literal);
      const cls = classify(literal);
      if (cls && !this.allowlist.allowsAddress(literal)) throw new EgressRefusedError(bare, address, cls);
      return { host: bare, address, family: literal.family, isName: false };
    }
    const answers = await this.resolver(bare);
    if (answers.length === 0) throw Object.assign(new Error(`${bare} did not resolve to any address`), { code: 'ENOTFOUND' });
    const trustedName = this.allowlist.allowsName(bare);
    let first: CheckedAddress | undefined;
    for (const answer of answers) {
      const ip = parseIp(answer.address);
      if (!ip) throw new Error(`the resolver answered "${answer.address}" for ${bare}, which is not an IP address`);
      const address = formatIp(ip);
      const cls = classify(ip);
      // One refused answer refuses the name: a round-robin answer must not be a lottery.
      if (cls && !trustedName && !this.allowlist.allowsAddress(ip)) throw new EgressRefusedError(bare, address, cls);
      first ??= { host: bare, address, family: ip.family, isName: true };
    }
    return first!;
  }

  /** Like {@link resolve} for a URL: undefined when allowed, the refusal otherwise. */
  async check(url: string | URL): Promise<EgressRefusedError | undefined> {
    try {
      await this.resolve(new URL(url).hostname);
      return undefined;
    } catch (err) {
      const refusal = egressRefusal(err);
      if (refusal) return refusal;
      throw err;
    }
  }
}
