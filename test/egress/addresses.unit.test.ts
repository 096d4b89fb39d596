/**
 * The egress guard's address rules, without a cluster: which addresses are refused (and as what),
 * in every spelling a URL or a resolver can carry them, and the operator allowlist.
 */
import { classify, formatIp, parseIp } from '../../src/egress/addresses.js';
import { EgressAllowlist } from '../../src/egress/allowlist.js';
import { loadConfig } from '../../src/platform/config.js';

const cls = (host: string) => {
  const ip = parseIp(host);
  if (!ip) throw new Error(`not an address: ${host}`);
  return classify(ip);
};

describe('classify', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'reserved'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.254', 'cgnat'],
    ['100.100.100.200', 'metadata'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'metadata'],
    ['169.254.1.1', 'link-local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.8', 'reserved'],
    ['192.0.0.192', 'metadata'],
    ['192.0.2.1', 'documentation'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.7', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fd00:ec2::254', 'metadata'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['2001:2::1', 'benchmarking'],
    ['2001::1', 'reserved'],
    ['100::1', 'reserved'],
    ['64:ff9b:1::1', 'private'],
    ['::7f00:1', 'reserved'],
    ['4000::1', 'reserved'],
  ])('%s is %s', (host, expected) => {
    expect(cls(host)).toBe(expected);
  });

  it.each([
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['[::ffff:127.0.0.1]', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['::ffff:10.1.2.3', 'private'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['64:ff9b::c0a8:101', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a9fe:a9fe::1', 'metadata'],
  ])('judges the IPv4 inside %s: %s', (host, expected) => {
    expect(cls(host)).toBe(expected);
  });

  it.each([
    ['2130706433', 'loopback'],
    ['0177.0.0.1', 'loopback'],
    ['0x7f.0.0.1', 'loopback'],
    ['0x7f.1', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['017700000001', 'loopback'],
    ['127.1', 'loopback'],
    ['2852039166', 'metadata'],
    ['0xa9.0xfe.0xa9.0xfe', 'metadata'],
    ['0251.0376.0251.0376', 'metadata'],
    ['0', 'unspecified'],
  ])('reads the decimal/octal/hex IPv4 spelling %s as %s', (host, expected) => {
    expect(cls(host)).toBe(expected);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '100.63.255.255',
    '100.128.0.0',
    '172.32.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ])('%s is public', (host) => {
    expect(cls(host)).toBeUndefined();
  });

  it('does not take host names for addresses', () => {
    for (const host of ['example.com', 'localhost', '127.0.0.1.nip.io', '0x7f.example', 'deadbeef.com'])
      expect(parseIp(host)).toBeUndefined();
  });

  it('prints addresses in their canonical form', () => {
    expect(formatIp(parseIp('0x7f.1')!)).toBe('127.0.0.1');
    expect(formatIp(parseIp('[::ffff:127.0.0.1]')!)).toBe('::ffff:7f00:1');
    expect(formatIp(parseIp('2001:0db8:0000:0000:0000:0000:0000:0001')!)).toBe('2001:db8::1');
    expect(formatIp(parseIp('fe80:0:0:1:0:0:0:1')!)).toBe('fe80:0:0:1::1');
  });
});

describe('allowlist', () => {
  const list = new EgressAllowlist(['10.1.0.0/16', '127.0.0.1', 'fd00::/8', 'keycloak.auth.svc.cluster.local', '*.corp.example', ' ']);

  it('allows addresses in its CIDRs and nothing next to them', () => {
    expect(list.allowsAddress(parseIp('10.1.200.3')!)).toBe(true);
    expect(list.allowsAddress(parseIp('10.2.0.1')!)).toBe(false);
    expect(list.allowsAddress(parseIp('127.0.0.1')!)).toBe(true);
    expect(list.allowsAddress(parseIp('127.0.0.2')!)).toBe(false);
    expect(list.allowsAddress(parseIp('fd12::1')!)).toBe(true);
    expect(list.allowsAddress(parseIp('fe80::1')!)).toBe(false);
  });

  it('allows its host names exactly and its suffixes below the dot', () => {
    expect(list.allowsName('keycloak.auth.svc.cluster.local')).toBe(true);
    expect(list.allowsName('KEYCLOAK.auth.svc.cluster.local.')).toBe(true);
    expect(list.allowsName('evil-keycloak.auth.svc.cluster.local')).toBe(false);
    expect(list.allowsName('api.corp.example')).toBe(true);
    expect(list.allowsName('corp.example')).toBe(false);
    expect(list.allowsName('evilcorp.example')).toBe(false);
  });

  it('refuses entries that are neither CIDRs, addresses nor names', () => {
    for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/x', 'http://x', 'a b', '*.']) {
      expect(() => new EgressAllowlist([bad])).toThrow(/egress allowlist/);
    }
  });

  it('is read from LATCHKEY_EGRESS_ALLOW, and a bad entry fails at start-up', () => {
    expect(loadConfig({}).egressAllow).toEqual([]);
    expect(loadConfig({ LATCHKEY_EGRESS_ALLOW: '10.0.0.0/8, keycloak.auth.svc  ::1' }).egressAllow).toEqual([
      '10.0.0.0/8',
      'keycloak.auth.svc',
      '::1',
    ]);
    expect(() => loadConfig({ LATCHKEY_EGRESS_ALLOW: '10.0.0.0/40' })).toThrow(/LATCHKEY_EGRESS_ALLOW/);
  });
});
