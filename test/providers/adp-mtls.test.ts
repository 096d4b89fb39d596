/**
 * ADP end to end (issue #57, parts 4 and 5): the shipped manifest (client credentials, HTTP Basic, and the
 * Integration's TLS client certificate on every call) against a simulator written from ADP's docs
 * (test/support/simulators/adp.ts) whose server asks for a client certificate and accepts only the one
 * registered as ADP-issued. Driven as the product does for a client-credentials provider: the Connect form
 * (the end user types the client ID and secret ADP issued their organization), a forced refresh, and the
 * proxy; a connection imported for an Integration without a certificate. Through Latchkey's real routes, a
 * real API server and the egress guard (the simulator's hosts resolve to its loopback address).
 */
import { X509Certificate } from 'node:crypto';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration } from '../../dev/fixtures.js';
import { catalogSpec } from '../support/catalog-files.js';
import type { Replica } from '../support/replica.js';
import { adp } from '../support/simulators/adp.js';
import { startSimulatedServerBed, type SimulatedServerBed } from '../support/simulated-server-bed.js';
import { createCertificateSecret } from '../support/tls-secrets.js';
import { makeClientCertificate } from '../support/test-ca.js';

const kc = testKubeConfig();
const sim = adp();
/** The certificate ADP signed for the application, and one it never issued. */
const ISSUED = makeClientCertificate('ExampleCorpMutualSSL');
const STRANGER = makeClientCertificate('NotIssuedByADP');
const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

let bed: SimulatedServerBed;
let ns: SimulatedServerBed['ns'];
let latchkey: Replica;

beforeAll(async () => {
  sim.registerCertificate(fingerprint(ISSUED.cert));
  bed = await startSimulatedServerBed(kc, 'adp-mtls', [sim], {
    async prepare(namespace) {
      await applyProvider(kc, 'adp', catalogSpec('adp'));
      await createCertificateSecret(kc, namespace, 'adp-issued', ISSUED);
      await createCertificateSecret(kc, namespace, 'adp-stranger', STRANGER);
      for (const [name, ref] of [
        ['adp', 'adp-issued'],
        ['adp-stranger', 'adp-stranger'],
        ['adp-uncertified', undefined],
      ] as const)
        await createIntegration(
          kc,
          namespace,
          name,
          { provider: 'adp', ...(ref ? { clientCertificateRef: { name: ref } } : {}) },
          { ...sim.client },
        );
    },
    synced: (ctx, namespace) =>
      ctx.catalog.getProvider('adp') !== undefined &&
      ['adp', 'adp-stranger', 'adp-uncertified'].every((i) => ctx.catalog.getIntegration(namespace, i)) &&
      ['adp-issued', 'adp-stranger'].every((s) => ctx.catalog.getReferencedSecret(namespace, s)),
  });
  ({ ns, latchkey } = bed);
}, 120_000);

afterAll(async () => {
  await bed?.close();
});

const submitForm = (integration: string, values: Record<string, string>) => bed.submitForm(integration, values);

const proxy = (integration: string, connectionId: string) =>
  latchkey.call('GET', '/proxy/hr/v1/workers', { headers: { 'connection-id': connectionId, 'provider-config-key': integration } });

describe('ADP: client credentials over mutual TLS', () => {
  it("gets a token presenting the Integration's certificate, renews the same way, and proxies with token and certificate", async () => {
    const before = sim.state.requests.length;
    const seenBefore = sim.presented.length;
    const r = await submitForm('adp', { ...sim.client });
    expect({ status: r.status, text: r.text }).toMatchObject({ status: 201 });
    const conn = await eventually(r.connection);
    const first = latchkey.ctx.connections.getConnection(ns.name, 'adp', conn.spec.connectionId)!;
    expect(first.credentials).toMatchObject({ type: 'OAUTH2_CC', token: sim.state.accessTokens.at(-1), client_id: sim.client.clientId });

    // The token request: HTTP Basic as ADP's docs show, over a connection that presented the issued certificate.
    const [exchange] = sim.state.requests.slice(before).filter((q) => q.path === '/auth/oauth/v2/token');
    expect(exchange!.headers.authorization).toMatch(/^Basic /);
    expect(exchange!.form.get('grant_type')).toBe('client_credentials');
    expect(exchange!.clientCert?.fingerprint256).toBe(fingerprint(ISSUED.cert));

    const renewed = await latchkey.call(
      'GET',
      `/connections/${encodeURIComponent(conn.spec.connectionId)}?provider_config_key=adp&force_refresh=true`,
    );
    expect(renewed.status).toBe(200);
    expect(renewed.body.credentials.token).toBe(sim.state.accessTokens.at(-1));
    expect(renewed.body.credentials.token).not.toBe(first.credentials.token);

    const proxied = await proxy('adp', conn.spec.connectionId);
    expect({ status: proxied.status, body: proxied.body }).toMatchObject({ status: 200, body: { workers: [] } });
    const call = sim.state.requests.filter((q) => q.path === '/hr/v1/workers').at(-1)!;
    expect(call.headers.authorization).toBe(`Bearer ${renewed.body.credentials.token}`);
    expect(call.clientCert?.fingerprint256).toBe(fingerprint(ISSUED.cert));
    // Every request ADP saw, token or API, carried the issued certificate.
    expect(sim.presented.slice(seenBefore).map((p) => p.fingerprint)).toEqual(
      sim.presented.slice(seenBefore).map(() => fingerprint(ISSUED.cert)),
    );
  });

  it("a certificate ADP did not issue: ADP's documented refusal comes back as a clear 400, nothing stored", async () => {
    const before = sim.presented.length;
    const r = await submitForm('adp-stranger', { ...sim.client });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text)).toMatchObject({ error: { code: 'invalid_credentials' } });
    expect(r.text).not.toContain(sim.client.clientSecret);
    expect(r.text).not.toContain('PRIVATE KEY');
    expect(r.connection()).toBeUndefined();
    // ADP saw the stranger's certificate and answered its 401.
    expect(sim.presented.slice(before)).toEqual([{ path: '/auth/oauth/v2/token', fingerprint: fingerprint(STRANGER.cert) }]);
  });

  it('an Integration without a certificate: a clear 409 naming clientCertificateRef, and nothing sent to ADP', async () => {
    const before = sim.state.requests.length;
    const r = await submitForm('adp-uncertified', { ...sim.client });
    expect(r.status).toBe(409);
    const body = JSON.parse(r.text) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('integration_not_configured');
    expect(body.error.message).toContain('clientCertificateRef');
    expect(r.connection()).toBeUndefined();

    // A connection imported with a token: the proxy refuses it the same way before calling ADP.
    const imported = await latchkey.call('POST', '/connections', {
      body: {
        provider_config_key: 'adp-uncertified',
        connection_id: 'imported-without-certificate',
        credentials: {
          type: 'OAUTH2_CC',
          token: 'an-imported-token',
          client_id: sim.client.clientId,
          client_secret: sim.client.clientSecret,
        },
      },
    });
    expect(imported.status).toBe(201);
    await eventually(() => latchkey.ctx.connections.getConnection(ns.name, 'adp-uncertified', 'imported-without-certificate'));
    const proxied = await proxy('adp-uncertified', 'imported-without-certificate');
    expect(proxied.status).toBe(409);
    expect(proxied.body.error.code).toBe('integration_not_configured');
    expect(sim.state.requests.length).toBe(before);
  });
});
