/**
 * The operator's egress allowlist (`LATCHKEY_EGRESS_ALLOW`, the chart's `egress.allow`): the only way
 * to let Latchkey reach an address the guard refuses by default. Entries are CIDRs (`10.0.0.0/8`,
 * `fd00::/8`), single addresses, host names (`keycloak.auth.svc.cluster.local`) or host name
 * suffixes (`*.corp.example`).
 */
import { formatIp, inPrefix, parseIp, type IpAddress } from './addresses.js';

interface Cidr {
  prefix: IpAddress;
  bits: number;
}

export class EgressAllowlist {
  private readonly cidrs: Cidr[] = [];
  private readonly names = new Set<string>();
  private readonly suffixes: string[] = [];

  /** Throws on an entry that is neither a CIDR, an address nor a host name (a configuration error). */
  constructor(readonly entries: readonly string[]) {
    for (const raw of entries) {
      const entry = raw.trim().toLowerCase();
      if (!entry) continue;
      const slash = entry.indexOf('/');
      const ip = parseIp(slash === -1 ? entry : entry.slice(0, slash));
      if (ip) {
        const max = ip.family === 4 ? 32 : 128;
        const bitsText = slash === -1 ? String(max) : entry.slice(slash + 1);
        const bits = Number(bitsText);
        if (!/^\d{1,3}$/.test(bitsText) || bits > max) throw new Error(`egress allowlist: "${raw}" is not a valid CIDR`);
        this.cidrs.push({ prefix: ip, bits });
      } else if (entry.startsWith('*.') && isHostName(entry.slice(2))) {
        this.suffixes.push(entry.slice(1));
      } else if (isHostName(entry)) {
        this.names.add(entry.replace(/\.$/, ''));
      } else {
        throw new Error(`egress allowlist: "${raw}" is neither a CIDR, an IP address nor a host name`);
      }
    }
  }

  get isEmpty(): boolean {
    return this.cidrs.length === 0 && this.names.size === 0 && this.suffixes.length === 0;
  }

  /** A host name the operator trusts whatever it resolves to. */
  allowsName(host: string): boolean {
    const h = host.toLowerCase().replace(/\.$/, '');
    return this.names.has(h) || this.suffixes.some((s) => h.endsWith(s));
  }

  allowsAddress(ip: IpAddress): boolean {
    return this.cidrs.some((c) => inPrefix(ip, c.prefix, c.bits));
  }

  /** For the start-up log line. */
  describe(): string {
    return [...this.cidrs.map((c) => `${formatIp(c.prefix)}/${c.bits}`), ...this.names, ...this.suffixes.map((s) => `*${s}`)].join(', ');
  }
}

function isHostName(s: string): boolean {
  return /^(?=.{1,253}\.?$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/.test(s);
}
