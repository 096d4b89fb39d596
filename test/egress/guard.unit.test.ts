/**
 * The egress guard end to end without a cluster: real HTTP servers on two loopback addresses, an
 * "upstream" on 127.0.0.2 (the allowlist lets it through, standing in for a public address) and a
 * "victim" on 127.0.0.1 on the same port (refused). The resolver is injected, so a name can answer
 * differently on each lookup (DNS rebinding). Both the guarded fetch (token calls, webhooks) and
 * the proxy's guarded dispatcher are exercised.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Cancellation, createAgents, sendOnce, type UpstreamAgents } from '../../src/proxy/upstream.js';
import { createGuardedFetch, type GuardedFetch } from '../../src/egress/fetch.js';
import { EgressGuard, EgressRefusedError, type Resolver } from '../../src/egress/guard.js';

interface Peer {
  server: Server;
  hits: string[];
}

function listen(
  host: string,
  port: number,
  handler?: (url: string) => { status: number; headers?: Record<string, string> },
): Promise<Peer> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    const answer = handler?.(req.url ?? '') ?? { status: 200 };
    res.writeHead(answer.status, answer.headers).end(`from ${host}`);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve({ server, hits }));
  });
}

let upstream: Peer;
let victim: Peer;
let port: number;
let resolverCalls: string[];
/** Answers per name, consumed in order; the last answer repeats. */
let answers: Record<string, string[]>;

const resolver: Resolver = async (host) => {
  resolverCalls.push(host);
  const list = answers[host];
  if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  const address = list.length > 1 ? list.shift()! : list[0]!;
  return address.split(',').map((a) => ({ address: a, family: a.includes(':') ? 6 : 4 }));
};

let guard: EgressGuard;
let guarded: GuardedFetch;

beforeAll(async () => {
  upstream = await listen('127.0.0.2', 0, (url) =>
    url === '/redirect' ? { status: 302, headers: { location: `http://127.0.0.1:${port}/stolen` } } : { status: 200 },
  );
  port = (upstream.server.address() as AddressInfo).port;
  victim = await listen('127.0.0.1', port);
  guard = new EgressGuard({ allow: ['127.0.0.2/32', 'trusted.test'], resolve: resolver });
  guarded = createGuardedFetch(guard);
});

afterAll(async () => {
  await guarded?.close();
  await Promise.all([upstream, victim].map((p) => p && new Promise((r) => p.server.close(r))));
});

beforeEach(() => {
  resolverCalls = [];
  answers = {};
  upstream.hits.length = 0;
  victim.hits.length = 0;
});

describe('resolve', () => {
  it('refuses literal addresses in any spelling without asking the resolver', async () => {
    for (const host of [
      '127.0.0.1',
      '2130706433',
      '0x7f.1',
      '0177.0.0.1',
      '[::ffff:127.0.0.1]',
      '::1',
      '169.254.169.254',
      '[64:ff9b::a9fe:a9fe]',
    ]) {
      await expect(guard.resolve(host)).rejects.toBeInstanceOf(EgressRefusedError);
    }
    expect(resolverCalls).toEqual([]);
  });

  it('refuses a name when any of its answers is refused, and says which', async () => {
    answers['mixed.test'] = ['127.0.0.2,169.254.169.254'];
    const err = (await guard.resolve('mixed.test').catch((e: unknown) => e)) as EgressRefusedError;
    expect(err).toBeInstanceOf(EgressRefusedError);
    expect(err.message).toBe('egress refused: mixed.test (169.254.169.254) is a metadata address; only LATCHKEY_EGRESS_ALLOW can allow it');
  });

  it('lets allowed addresses and allowed names through, and hands back the address to connect to', async () => {
    answers['up.test'] = ['127.0.0.2'];
    answers['trusted.test'] = ['10.3.2.1'];
    await expect(guard.resolve('up.test')).resolves.toEqual({ host: 'up.test', address: '127.0.0.2', family: 4, isName: true });
    await expect(guard.resolve('trusted.test')).resolves.toMatchObject({ address: '10.3.2.1' });
    await expect(guard.resolve('127.0.0.2')).resolves.toMatchObject({ address: '127.0.0.2', isName: false });
  });
});

describe('guarded fetch', () => {
  it('refuses private targets with the refusal itself, and the victim receives nothing', async () => {
    answers['loopback.test'] = ['127.0.0.1'];
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://2130706433:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://loopback.test:${port}/`,
    ]) {
      await expect(guarded.fetch(url, { method: 'POST', body: 'client_secret=x' })).rejects.toBeInstanceOf(EgressRefusedError);
    }
    expect(victim.hits).toEqual([]);
  });

  it('reaches an allowed address', async () => {
    const res = await guarded.fetch(`http://127.0.0.2:${port}/ok`);
    expect([res.status, await res.text(), res instanceof Response]).toEqual([200, 'from 127.0.0.2', true]);
  });

  it('connects to the address it checked: a name that answers an allowed address, then a loopback one, is looked up once per connection', async () => {
    answers['rebind.test'] = ['127.0.0.2', '127.0.0.1'];
    const res = await guarded.fetch(`http://rebind.test:${port}/first`, { headers: { connection: 'close' } });
    expect(await res.text()).toBe('from 127.0.0.2');
    expect(resolverCalls).toEqual(['rebind.test']);
    // The next connection asks again, gets the loopback answer, and is refused.
    await expect(guarded.fetch(`http://rebind.test:${port}/second`)).rejects.toBeInstanceOf(EgressRefusedError);
    expect(upstream.hits).toEqual(['/first']);
    expect(victim.hits).toEqual([]);
  });

  it('checks every redirect hop', async () => {
    const manual = await guarded.fetch(`http://127.0.0.2:${port}/redirect`, { redirect: 'manual' });
    expect(manual.status).toBe(302);
    await expect(guarded.fetch(`http://127.0.0.2:${port}/redirect`)).rejects.toBeInstanceOf(EgressRefusedError);
    expect(victim.hits).toEqual([]);
  });
});

/** One GET through the proxy's dispatcher, the body read whole. */
async function viaProxy(agents: UpstreamAgents, url: string): Promise<{ status: number; body: string }> {
  const response = await sendOnce(
    { method: 'GET', url: new URL(url), headers: {}, body: { kind: 'none' } },
    agents,
    new Cancellation(),
    5_000,
  );
  let body = '';
  for await (const chunk of response.stream()) body += (chunk as Buffer).toString();
  return { status: response.statusCode, body };
}

describe("the proxy's dispatcher", () => {
  const refused = { code: 'egress_refused' };

  it('refuses loopback and metadata targets before connecting', async () => {
    const agents = createAgents(guard);
    answers['loopback.test'] = ['127.0.0.1'];
    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', 'loopback.test', '169.254.169.254']) {
      await expect(viaProxy(agents, `http://${host}:${port}/`)).rejects.toMatchObject(refused);
    }
    expect(victim.hits).toEqual([]);
    agents.destroy();
  });

  it('connects to the checked address, not to what a second lookup would say', async () => {
    answers['rebind.test'] = ['127.0.0.2', '127.0.0.1'];
    const first = createAgents(guard);
    await expect(viaProxy(first, `http://rebind.test:${port}/agent`)).resolves.toEqual({ status: 200, body: 'from 127.0.0.2' });
    expect(resolverCalls).toEqual(['rebind.test']);
    first.destroy();
    // A new connection looks the name up again, and this time the answer is refused.
    const second = createAgents(guard);
    await expect(viaProxy(second, `http://rebind.test:${port}/agent-again`)).rejects.toMatchObject(refused);
    expect(upstream.hits).toEqual(['/agent']);
    expect(victim.hits).toEqual([]);
    second.destroy();
  });
});

describe('TLS to the checked address', () => {
  // A certificate for the name only: the connection goes to the checked address, while SNI and
  // certificate verification still use the name.
  const dir = mkdtempSync(join(tmpdir(), 'egress-tls-'));
  let cert: Buffer;
  let tlsServer: ReturnType<typeof createTlsServer>;
  let tlsPort: number;

  beforeAll(async () => {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=tls.test',
        '-addext',
        'subjectAltName=DNS:tls.test',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    cert = readFileSync(join(dir, 'cert.pem'));
    tlsServer = createTlsServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => res.end(`tls ${req.headers.host}`));
    await new Promise<void>((r) => tlsServer.listen(0, '127.0.0.2', r));
    tlsPort = (tlsServer.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((r) => tlsServer?.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it("verifies the certificate against the name with fetch and with the proxy's dispatcher", async () => {
    answers['tls.test'] = ['127.0.0.2'];
    const tlsFetch = createGuardedFetch(guard, { ca: cert });
    try {
      const res = await tlsFetch.fetch(`https://tls.test:${tlsPort}/`);
      expect(await res.text()).toBe(`tls tls.test:${tlsPort}`);
      // The address itself is not in the certificate: what was connected to is not what is verified.
      await expect(tlsFetch.fetch(`https://127.0.0.2:${tlsPort}/`)).rejects.toThrow();
    } finally {
      await tlsFetch.close();
    }
    const agents = createAgents(guard, { ca: cert });
    await expect(viaProxy(agents, `https://tls.test:${tlsPort}/`)).resolves.toEqual({ status: 200, body: `tls tls.test:${tlsPort}` });
    await expect(viaProxy(agents, `https://127.0.0.2:${tlsPort}/`)).rejects.toMatchObject({ code: 'provider_unreachable' });
    agents.destroy();
  });
});
