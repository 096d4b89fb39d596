/**
 * Client certificates through the egress guard (mutual TLS): the guarded fetch (token requests) and the proxy's
 * dispatcher present the certificate a request carries, and only to a server that asks; each certificate has its
 * own pool, kept while used and closed past the limit; and a certified request passes the guard like any other
 * (a refused address stays refused). Against a real TLS server on a loopback address that asks for a certificate.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { Agent } from 'undici';
import { ClientCertificateAgents } from '../../src/egress/client-certificate-agents.js';
import { createGuardedFetch, withClientCertificate } from '../../src/egress/fetch.js';
import { EgressGuard, EgressRefusedError } from '../../src/egress/guard.js';
import { Cancellation, createAgents, sendOnce } from '../../src/proxy/upstream.js';
import { makeClientCertificate, makeTestCa, type TestCa } from '../support/test-ca.js';

const client = makeClientCertificate('egress-client');
const second = makeClientCertificate('egress-second');
const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;
let ca: TestCa;
let server: Server;
let port: number;
let guard: EgressGuard;

beforeAll(async () => {
  ca = makeTestCa(['mtls.test']);
  server = createServer({ key: ca.serverKey, cert: ca.serverCert, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const peer = (req.socket as TLSSocket).getPeerCertificate();
    res.end(peer?.raw ? peer.fingerprint256 : 'none');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.2', r));
  port = (server.address() as AddressInfo).port;
  guard = new EgressGuard({
    allow: ['127.0.0.2/32'],
    ca: ca.caCert,
    resolve: async (host) => {
      if (host === 'mtls.test') return [{ address: '127.0.0.2', family: 4 }];
      if (host === 'loopback.test') return [{ address: '127.0.0.1', family: 4 }];
      throw Object.assign(new Error(`${host} unknown`), { code: 'ENOTFOUND' });
    },
  });
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  ca.remove();
});

describe('the guarded fetch', () => {
  it("presents the request's certificate, and none without one", async () => {
    const guarded = createGuardedFetch(guard);
    try {
      const url = `https://mtls.test:${port}/`;
      expect(await (await guarded.fetch(url, withClientCertificate({}, client))).text()).toBe(fingerprint(client.cert));
      expect(await (await guarded.fetch(url, withClientCertificate({}, second))).text()).toBe(fingerprint(second.cert));
      expect(await (await guarded.fetch(url)).text()).toBe('none');
      expect(await (await guarded.fetch(url, withClientCertificate({}, undefined))).text()).toBe('none');
    } finally {
      await guarded.close();
    }
  });

  it('still refuses an address the guard refuses', async () => {
    const guarded = createGuardedFetch(guard);
    try {
      await expect(guarded.fetch(`https://loopback.test:${port}/`, withClientCertificate({}, client))).rejects.toBeInstanceOf(
        EgressRefusedError,
      );
    } finally {
      await guarded.close();
    }
  });
});

describe("the proxy's dispatcher", () => {
  it("presents the request's certificate on its own pool, and none on the shared one", async () => {
    const agents = createAgents(guard);
    const get = async (clientCertificate?: typeof client) => {
      const response = await sendOnce(
        {
          method: 'GET',
          url: new URL(`https://mtls.test:${port}/`),
          headers: {},
          body: { kind: 'none' },
          ...(clientCertificate ? { clientCertificate } : {}),
        },
        agents,
        new Cancellation(),
        5_000,
      );
      let body = '';
      for await (const chunk of response.stream()) body += (chunk as Buffer).toString();
      return body;
    };
    try {
      expect(await get(client)).toBe(fingerprint(client.cert));
      expect(await get()).toBe('none');
      expect(await get(client)).toBe(fingerprint(client.cert));
      expect(agents.withCertificate(client)).toBe(agents.withCertificate({ ...client }));
      expect(agents.withCertificate(client)).not.toBe(agents.dispatcher);
    } finally {
      agents.destroy();
    }
  });
});

describe('ClientCertificateAgents', () => {
  it('keeps one pool per certificate and closes the least recently used past its limit', async () => {
    const made: Agent[] = [];
    const pools = new ClientCertificateAgents((_certificate) => {
      const agent = new Agent();
      made.push(agent);
      return agent;
    }, 2);
    const third = makeClientCertificate('egress-third');
    const a = pools.get(client);
    expect(pools.get({ cert: client.cert, key: client.key })).toBe(a);
    const b = pools.get(second);
    pools.get(client); // client is now the most recently used
    pools.get(third); // evicts second
    expect(pools.size).toBe(2);
    expect(made).toHaveLength(3);
    expect(b.closed).toBe(true);
    expect(a.closed).toBe(false);
    expect(pools.get(second)).not.toBe(b);
    await pools.close();
    expect(made.every((agent) => agent.closed || agent.destroyed)).toBe(true);
  });
});
