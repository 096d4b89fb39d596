/**
 * IP address parsing and classification: which addresses a tenant or an end user must never make
 * Latchkey connect to (loopback, private, link-local, metadata, ...). Pure functions, no I/O.
 */
import { isIP } from 'node:net';

export interface IpAddress {
  family: 4 | 6;
  /** 4 or 16 bytes, network order. */
  bytes: Uint8Array;
}

/** Why an address is refused; undefined for a public unicast address. */
export type AddressClass =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'cgnat'
  | 'metadata'
  | 'multicast'
  | 'benchmarking'
  | 'documentation'
  | 'reserved';

/**
 * Parses an IP address as it may appear in a URL host or a resolver answer: dotted IPv4, the
 * decimal/octal/hex spellings the URL standard also accepts (`2130706433`, `0177.0.0.1`, `0x7f.1`),
 * IPv6 with or without brackets and with an embedded dotted IPv4 tail. Undefined for a host name.
 */
export function parseIp(input: string): IpAddress | undefined {
  let host = input.trim();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  const zone = host.indexOf('%');
  if (zone !== -1 && host.includes(':')) host = host.slice(0, zone);
  if (isIP(host) === 4) return { family: 4, bytes: Uint8Array.from(host.split('.').map(Number)) };
  if (isIP(host) === 6) return { family: 6, bytes: parseIpv6(host) };
  // Let the URL parser apply its IPv4 number rules (the same ones fetch and node:http see).
  if (/^[0-9a-fA-FxX.]+$/.test(host)) {
    try {
      const normalized = new URL(`http://${host}/`).hostname;
      if (isIP(normalized) === 4) return { family: 4, bytes: Uint8Array.from(normalized.split('.').map(Number)) };
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function parseIpv6(text: string): Uint8Array {
  const bytes = new Uint8Array(16);
  let s = text.toLowerCase();
  // A dotted IPv4 tail (::ffff:1.2.3.4) becomes two hex groups.
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    const [a, b, c, d] = tail[1]!.split('.').map(Number) as [number, number, number, number];
    s = s.slice(0, -tail[1]!.length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = s.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = rest !== undefined && rest !== '' ? rest.split(':') : [];
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  groups.forEach((g, i) => {
    const v = parseInt(g, 16);
    bytes[i * 2] = v >> 8;
    bytes[i * 2 + 1] = v & 0xff;
  });
  return bytes;
}

/** The printed form (dotted IPv4, compressed lowercase IPv6) used in messages and for connecting. */
export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) return Array.from(ip.bytes).join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((ip.bytes[i]! << 8) | ip.bytes[i + 1]!);
  // Longest run of zero groups (2 or more) becomes "::".
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best === -1) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/** True when `ip` lies in `prefix`/`bits` (same family). */
export function inPrefix(ip: IpAddress, prefix: IpAddress, bits: number): boolean {
  if (ip.family !== prefix.family) return false;
  for (let i = 0; i < prefix.bytes.length && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((ip.bytes[i]! & mask) !== (prefix.bytes[i]! & mask)) return false;
  }
  return true;
}

function range(cidr: string, cls: AddressClass): { prefix: IpAddress; bits: number; cls: AddressClass } {
  const [addr, bits] = cidr.split('/') as [string, string];
  return { prefix: parseIp(addr)!, bits: Number(bits), cls };
}

/**
 * IANA's special-purpose registries (RFC 6890 and successors), most specific first, plus the cloud
 * metadata addresses by name so a refusal says what was hit.
 */
const V4_RANGES = [
  range('169.254.169.254/32', 'metadata'), // AWS, GCP, Azure, OpenStack, DigitalOcean...
  range('100.100.100.200/32', 'metadata'), // Alibaba Cloud
  range('192.0.0.192/32', 'metadata'), // Oracle Cloud
  range('0.0.0.0/32', 'unspecified'),
  range('0.0.0.0/8', 'reserved'), // "this network"
  range('10.0.0.0/8', 'private'),
  range('100.64.0.0/10', 'cgnat'),
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link-local'),
  range('172.16.0.0/12', 'private'),
  range('192.0.0.0/24', 'reserved'), // IETF protocol assignments
  range('192.0.2.0/24', 'documentation'),
  range('192.88.99.0/24', 'reserved'), // deprecated 6to4 relay anycast
  range('192.168.0.0/16', 'private'),
  range('198.18.0.0/15', 'benchmarking'),
  range('198.51.100.0/24', 'documentation'),
  range('203.0.113.0/24', 'documentation'),
  range('224.0.0.0/4', 'multicast'),
  range('240.0.0.0/4', 'reserved'), // includes 255.255.255.255
];

const V6_RANGES = [
  range('fd00:ec2::254/128', 'metadata'), // AWS IMDS over IPv6
  range('::/128', 'unspecified'),
  range('::1/128', 'loopback'),
  range('64:ff9b:1::/48', 'private'), // local-use NAT64 (RFC 8215)
  range('100::/64', 'reserved'), // discard-only
  range('2001:db8::/32', 'documentation'),
  range('2001:2::/48', 'benchmarking'),
  range('2001::/23', 'reserved'), // IETF protocol assignments (Teredo, ORCHID...)
  range('3fff::/20', 'documentation'),
  range('5f00::/16', 'reserved'), // SRv6 SIDs
  range('fc00::/7', 'private'), // unique local
  range('fe80::/10', 'link-local'),
  range('fec0::/10', 'private'), // deprecated site-local
  range('ff00::/8', 'multicast'),
  range('::/96', 'reserved'), // deprecated IPv4-compatible (other than :: and ::1 above)
];

const MAPPED = range('::ffff:0:0/96', 'reserved');
const NAT64 = range('64:ff9b::/96', 'reserved');
const SIX_TO_FOUR = range('2002::/16', 'reserved');

/**
 * The IPv4 address an IPv6 address stands for, when the network would deliver it there:
 * IPv4-mapped (::ffff:a.b.c.d), the NAT64 well-known prefix (64:ff9b::a.b.c.d) and 6to4
 * (2002:aabb:ccdd::). Such addresses are judged by their IPv4 address.
 */
export function embeddedIpv4(ip: IpAddress): IpAddress | undefined {
  if (ip.family !== 6) return undefined;
  if (inPrefix(ip, MAPPED.prefix, 96) || inPrefix(ip, NAT64.prefix, 96)) return { family: 4, bytes: ip.bytes.slice(12, 16) };
  if (inPrefix(ip, SIX_TO_FOUR.prefix, 16)) return { family: 4, bytes: ip.bytes.slice(2, 6) };
  return undefined;
}

/** Why Latchkey refuses to connect to `ip` by default, or undefined for a public address. */
export function classify(ip: IpAddress): AddressClass | undefined {
  const v4 = embeddedIpv4(ip);
  if (v4) return classify(v4);
  for (const r of ip.family === 4 ? V4_RANGES : V6_RANGES) if (inPrefix(ip, r.prefix, r.bits)) return r.cls;
  // Everything outside global unicast 2000::/3 is unassigned or special.
  if (ip.family === 6 && (ip.bytes[0]! & 0xe0) !== 0x20) return 'reserved';
  return undefined;
}
