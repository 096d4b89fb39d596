/**
 * `tokenRequestAuthMethod: tls_client_auth` (RFC 8705 §2.1: the PKI method) end to end, against a real
 * authorization server: oidc-provider over HTTPS with its mTLS feature, which authenticates the client by the
 * certificate its TLS connection presented (chained to a CA it trusts, with the subject DN the client registered)
 * and the client ID in the body, nothing else. The end user types the client ID alone in the Connect form; the
 * Integration's kubernetes.io/tls Secret holds the certificate, presented through the egress guard.
 */
import { randomBytes } from 'node:crypto';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { LOOPBACK_PEERS } from '../../dev/egress.js';
import { applyProvider, createEnvironment, createIntegration, deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { startOidcServer, type OidcTestServer } from '../../dev/peers/oidc-server.js';
import { EgressGuard } from '../../src/egress/guard.js';
import { sealSession } from '../support/fixtures.js';
import { startReplica, type Replica } from '../support/replica.js';
import { submitConnectForm } from '../support/simulated-consent.js';
import { createCertificateSecret } from '../support/tls-secrets.js';
import { makeClientCertificate, makeTestCa, type TestCa } from '../support/test-ca.js';

const kc = testKubeConfig();
const PROVIDER = `tls-client-auth-${process.pid}`;
const REGISTERED = makeClientCertificate('latchkey-tls-client');
const OTHER = makeClientCertificate('someone-else');
const CLIENT_ID = `tls-${randomBytes(4).toString('hex')}`;

let ca: TestCa;
let oidc: OidcTestServer;
let ns: { name: string; delete(): Promise<void> };
let env: TestEnvironment;
let latchkey: Replica;

const tlsSecret = (name: string, certificate: { cert: string; key: string }) => createCertificateSecret(kc, ns.name, name, certificate);

beforeAll(async () => {
  ca = makeTestCa(['127.0.0.1']);
  oidc = await startOidcServer({
    clients: [
      {
        clientId: CLIENT_ID,
        clientSecret: 'unused-by-tls-client-auth-0123456789',
        tokenEndpointAuthMethod: 'tls_client_auth',
        tlsClientAuthSubjectDn: 'CN=latchkey-tls-client',
      },
    ],
    tls: { key: ca.serverKey, cert: ca.serverCert },
    // Both self-signed certificates chain to a trusted CA: only the subject DN tells them apart.
    mutualTls: { ca: REGISTERED.cert + OTHER.cert },
  });
  ns = await createTestNamespace(kc, 'tls-client-auth');
  env = await createEnvironment(kc, ns.name, { mode: 'development' });
  await applyProvider(kc, PROVIDER, {
    displayName: 'Certified service',
    authMode: 'OAUTH2_CC',
    tokenUrl: oidc.tokenUrl,
    tokenRequestAuthMethod: 'tls_client_auth',
    defaultScopes: ['read'],
  });
  await tlsSecret('registered-cert', REGISTERED);
  await tlsSecret('other-cert', OTHER);
  await createIntegration(kc, ns.name, 'tls', { provider: PROVIDER, clientCertificateRef: { name: 'registered-cert' } });
  await createIntegration(kc, ns.name, 'tls-other', { provider: PROVIDER, clientCertificateRef: { name: 'other-cert' } });
  latchkey = await startReplica(kc, {
    namespaces: [ns.name],
    components: ['server'],
    key: env.secretKey,
    egress: new EgressGuard({ allow: LOOPBACK_PEERS.split(','), ca: ca.caCert }),
  });
  await eventually(
    () =>
      latchkey.ctx.catalog.listEnvironments(ns.name).length > 0 &&
      latchkey.ctx.catalog.getProvider(PROVIDER) !== undefined &&
      ['tls', 'tls-other'].every((i) => latchkey.ctx.catalog.getIntegration(ns.name, i)) &&
      ['registered-cert', 'other-cert'].every((s) => latchkey.ctx.catalog.getReferencedSecret(ns.name, s)),
  );
}, 120_000);

afterAll(async () => {
  await latchkey?.stop();
  await deleteProvider(kc, PROVIDER);
  await ns?.delete();
  await oidc?.close();
  ca?.remove();
});

let users = 0;
function submitForm(integration: string, values: Record<string, string>) {
  const endUser = `user-${++users}`;
  const session = sealSession(env.secretKey, { namespace: ns.name, endUser: { id: endUser }, allowedIntegrations: [integration] });
  return submitConnectForm(latchkey, ns.name, { endUser, session, integration, values });
}

describe('tokenRequestAuthMethod: tls_client_auth', () => {
  it('gets a token with the client ID alone, the certificate the proof, and renews the same way', async () => {
    const calls = oidc.tokenCalls.length;
    const r = await submitForm('tls', { clientId: CLIENT_ID });
    expect({ status: r.status, text: r.text, refused: oidc.tokenCalls.slice(calls).map((c) => c.error) }).toMatchObject({ status: 201 });
    const conn = await eventually(r.connection);
    const first = latchkey.ctx.connections.getConnection(ns.name, 'tls', conn.spec.connectionId)!;
    expect(first.credentials).toMatchObject({ type: 'OAUTH2_CC', client_id: CLIENT_ID });
    expect((await oidc.provider.ClientCredentials.find(first.credentials.token as string))?.clientId).toBe(CLIENT_ID);
    expect(oidc.tokenCalls.slice(calls).map((c) => [c.grantType, c.status])).toEqual([['client_credentials', 200]]);

    const renewed = await latchkey.call(
      'GET',
      `/connections/${encodeURIComponent(conn.spec.connectionId)}?provider_config_key=tls&force_refresh=true`,
    );
    expect(renewed.status).toBe(200);
    expect(renewed.body.credentials.token).not.toBe(first.credentials.token);
    expect((await oidc.provider.ClientCredentials.find(renewed.body.credentials.token as string))?.clientId).toBe(CLIENT_ID);
  });

  it('is refused with a certificate the client did not register: a clear 400, nothing stored, no key text', async () => {
    const r = await submitForm('tls-other', { clientId: CLIENT_ID });
    expect(r.status).toBe(400);
    expect(r.text).toContain('did not accept this client ID');
    expect(r.text).not.toContain('and secret');
    expect(r.text).not.toContain('PRIVATE KEY');
    expect(r.connection()).toBeUndefined();
    expect(oidc.tokenCalls.at(-1)).toMatchObject({ grantType: 'client_credentials', status: 401 });
  });
});
