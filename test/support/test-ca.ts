/**
 * A certificate authority made at test start with openssl, and a server certificate it signs for
 * given IP addresses and host names: what a platform team's private CA is to the chart
 * (config.egress.caBundle), and what the provider simulators' server presents (test/support/simulators).
 * The key files stay in a temporary directory removed by `remove()`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCa {
  /** The CA certificate (PEM): what clients are given to trust. */
  caCert: string;
  /** A server key and certificate (PEM) for the addresses and names asked for. */
  serverKey: string;
  serverCert: string;
  remove(): void;
}

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

const IP = /^[\d.]+$|:/;

/** `names`: IP addresses and DNS names (`*.x.com` wildcards too), each a subjectAltName of the server certificate. */
export function makeTestCa(names: string[]): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-test-ca-'));
  const f = (name: string) => join(dir, name);
  openssl(['req', '-x509', ...EC, '-keyout', f('ca.key'), '-out', f('ca.crt'), '-days', '2', '-subj', '/CN=Latchkey test CA']);
  openssl(['req', '-new', ...EC, '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', `/CN=${names[0]}`]);
  writeFileSync(
    f('server.ext'),
    [
      `subjectAltName=${names.map((n) => (IP.test(n) ? `IP:${n}` : `DNS:${n}`)).join(',')}`,
      'basicConstraints=CA:FALSE',
      'keyUsage=digitalSignature',
      'extendedKeyUsage=serverAuth',
    ].join('\n'),
  );
  openssl([
    'x509',
    '-req',
    '-in',
    f('server.csr'),
    '-CA',
    f('ca.crt'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-out',
    f('server.crt'),
    '-days',
    '2',
    '-extfile',
    f('server.ext'),
  ]);
  return {
    caCert: readFileSync(f('ca.crt'), 'utf8'),
    serverKey: readFileSync(f('server.key'), 'utf8'),
    serverCert: readFileSync(f('server.crt'), 'utf8'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A self-signed client certificate and its key (PEM), for mutual TLS: what a provider issues an application
 * (ADP signs one from a CSR). `days` of validity from now.
 */
export function makeClientCertificate(commonName: string, days = 2): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-client-cert-'));
  try {
    const f = (name: string) => join(dir, name);
    openssl([
      'req',
      '-x509',
      ...EC,
      '-keyout',
      f('client.key'),
      '-out',
      f('client.crt'),
      '-days',
      String(days),
      '-subj',
      `/CN=${commonName}`,
      '-addext',
      'extendedKeyUsage=clientAuth',
    ]);
    return { cert: readFileSync(f('client.crt'), 'utf8'), key: readFileSync(f('client.key'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A self-signed RSA certificate and its key (PEM): what a customer registers with a provider that verifies
 * XML signatures by it (SuccessFactors' Manage OAuth2 Client Applications: RSA-SHA256).
 */
export function makeRsaSigningCertificate(commonName: string, days = 2): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-signing-cert-'));
  try {
    const f = (name: string) => join(dir, name);
    // One request: a new RSA key and its self-signed certificate.
    const request = ['req', '-x509', '-newkey', 'rsa:2048', '-nodes'];
    openssl([...request, '-keyout', f('k.pem'), '-out', f('c.pem'), '-days', String(days), '-subj', `/CN=${commonName}`]);
    return { cert: readFileSync(f('c.pem'), 'utf8'), key: readFileSync(f('k.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A self-signed client certificate valid from a minute ago for `seconds` from now (what expires while an
 * Integration is Ready): `openssl ca` alone takes an end date to the second.
 */
export function makeShortLivedClientCertificate(commonName: string, seconds: number): { cert: string; key: string; notAfter: number } {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-short-cert-'));
  try {
    const f = (name: string) => join(dir, name);
    writeFileSync(f('index.txt'), '');
    writeFileSync(f('serial'), '01\n');
    writeFileSync(
      f('ca.cnf'),
      [
        '[ca]',
        'default_ca = short',
        '[short]',
        `database = ${f('index.txt')}`,
        `serial = ${f('serial')}`,
        `new_certs_dir = ${dir}`,
        'default_md = sha256',
        'policy = any',
        'email_in_dn = no',
        '[any]',
        'commonName = supplied',
        '',
      ].join('\n'),
    );
    openssl(['req', '-new', ...EC, '-keyout', f('client.key'), '-out', f('client.csr'), '-subj', `/CN=${commonName}`]);
    const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
    const notAfter = Math.floor(Date.now() / 1000) * 1000 + seconds * 1000;
    openssl([
      'ca',
      '-batch',
      '-selfsign',
      '-notext',
      '-config',
      f('ca.cnf'),
      '-keyfile',
      f('client.key'),
      '-in',
      f('client.csr'),
      '-out',
      f('client.crt'),
      '-startdate',
      stamp(Date.now() - 60_000),
      '-enddate',
      stamp(notAfter),
    ]);
    return { cert: readFileSync(f('client.crt'), 'utf8'), key: readFileSync(f('client.key'), 'utf8'), notAfter };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
