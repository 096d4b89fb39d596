/**
 * SAP SuccessFactors through the OAuth 2.0 SAML 2.0 bearer assertion grant (RFC 7522; issue #57, part 4): the
 * shipped manifest, Latchkey's real Connect route, refresh and proxy and a real API server, against a simulator
 * written from SAP's pages (test/support/simulators/sap-success-factors.ts). The simulator is hand-written (no
 * SuccessFactors runs here); its real part is the signature check: xml-crypto, a real XML-DSig verifier, verifies
 * each assertion Latchkey signed against the X.509 certificate the customer registered, and nothing else.
 * The end user types the API key, the API server, the company ID and the user ID; the Integration holds the key.
 */
import { randomBytes } from 'node:crypto';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration } from '../../dev/fixtures.js';
import { catalogSpec } from '../support/catalog-files.js';
import type { Replica } from '../support/replica.js';
import { startSimulatedServerBed, type SimulatedServerBed } from '../support/simulated-server-bed.js';
import { sapSuccessFactors, SF_HOST } from '../support/simulators/sap-success-factors.js';
import { captureLogs } from '../support/log-capture.js';
import { makeRsaSigningCertificate } from '../support/test-ca.js';

const kc = testKubeConfig();
const REGISTERED = makeRsaSigningCertificate('latchkey-sf-test');
const OTHER = makeRsaSigningCertificate('latchkey-sf-other');
const sim = sapSuccessFactors({ certificate: REGISTERED.cert });
let bed: SimulatedServerBed;
let ns: SimulatedServerBed['ns'];
let latchkey: Replica;
const logs = captureLogs();

beforeAll(async () => {
  bed = await startSimulatedServerBed(kc, 'sf-saml', [sim], {
    logger: logs.logger,
    async prepare(namespace) {
      await applyProvider(kc, 'sap-success-factors', catalogSpec('sap-success-factors'));
      for (const [name, pair] of [
        ['sf', REGISTERED],
        ['sf-wrong', OTHER],
      ] as const)
        await createIntegration(kc, namespace, name, { provider: 'sap-success-factors' }, { privateKey: pair.key, certificate: pair.cert });
    },
    synced: (ctx, namespace) =>
      Boolean(ctx.catalog.getProvider('sap-success-factors')) &&
      ['sf', 'sf-wrong'].every((i) => ctx.catalog.readSecretValue(namespace, `${i}-client`, 'privateKey')),
  });
  ({ ns, latchkey } = bed);
}, 120_000);

afterAll(async () => {
  await bed?.close();
});

const connect = (integration: string, config: Partial<Record<'apiServer' | 'companyId' | 'userId', string>> = {}) =>
  bed.submitForm(
    integration,
    { clientId: sim.registered.apiKey },
    { apiServer: SF_HOST, companyId: sim.registered.companyId, userId: sim.registered.userId, ...config },
  );

const tokenRequests = () => sim.state.requests.filter((r) => r.method === 'POST' && r.path === '/oauth/token');
const proxyUsers = (connectionId: string) =>
  latchkey.call('GET', '/proxy/odata/v2/User', { headers: { 'connection-id': connectionId, 'provider-config-key': 'sf' } });

describe('sap-success-factors: the SAML 2.0 bearer assertion grant (RFC 7522)', () => {
  it('connects with a signed assertion, calls the OData API with the token, and gets a new token by a new assertion', async () => {
    const before = tokenRequests().length;
    const r = await connect('sf');
    expect({ status: r.status, text: r.text }).toMatchObject({ status: 201 });
    const conn = await eventually(r.connection);
    const connectionId = conn.spec.connectionId;
    const first = latchkey.ctx.connections.getConnection(ns.name, 'sf', connectionId)!;
    expect(first.credentials).toMatchObject({ type: 'OAUTH2_CC', token: sim.state.accessTokens.at(-1), client_id: sim.registered.apiKey });
    // expires_in 86400: a day from the exchange; no refresh token (the grant has none).
    const lifetime = Date.parse(String(first.credentials.expires_at)) - Date.parse(String(conn.metadata.creationTimestamp));
    expect(Math.abs(lifetime - 86400 * 1000)).toBeLessThan(60_000);
    expect(first.credentials).not.toHaveProperty('refresh_token');

    // The token request as SAP's KBAs describe it: a form with the API key as client_id, the company, the assertion.
    const [sent] = tokenRequests().slice(before);
    expect(sent!.host).toBe(SF_HOST);
    expect(sent!.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded\b/);
    expect(sent!.headers.authorization).toBeUndefined();
    expect([...sent!.form.keys()].sort()).toEqual(['assertion', 'client_id', 'company_id', 'grant_type', 'new_token']);
    expect(sent!.form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:saml2-bearer');
    expect(sent!.form.get('company_id')).toBe(sim.registered.companyId);
    expect(sent!.form.get('new_token')).toBe('true');
    // What xml-crypto verified: the user named, the audience, the recipient, the api_key attribute; nothing stored of it.
    const assertion = sim.assertions.at(-1)!;
    expect(assertion).toContain(`>${sim.registered.userId}</saml2:NameID>`);
    expect(assertion).toContain(`Recipient="https://${SF_HOST}/oauth/token"`);
    expect(assertion).toContain(`<saml2:AttributeValue>${sim.registered.apiKey}</saml2:AttributeValue>`);
    expect(JSON.stringify(first.credentials)).not.toContain(sent!.form.get('assertion')!.slice(0, 40));

    const call = await proxyUsers(connectionId);
    expect(call.status).toBe(200);
    expect(call.body).toEqual({ d: { results: [{ userId: 'sfadmin', username: 'sfadmin' }] } });
    const apiCall = sim.state.requests.filter((q) => q.path === '/odata/v2/User').at(-1)!;
    expect(apiCall.headers.authorization).toBe(`Bearer ${first.credentials.token}`);

    // The token expires (SuccessFactors answers [LGN0022]): the proxy's 401 makes a new assertion, a new token, the call again.
    const assertionsBefore = sim.assertions.length;
    sim.expireTokens();
    const again = await proxyUsers(connectionId);
    expect(again.status).toBe(200);
    expect(sim.assertions.length).toBe(assertionsBefore + 1);
    expect(sim.assertions.at(-1)).not.toBe(sim.assertions.at(-2));
    const renewed = latchkey.ctx.connections.getConnection(ns.name, 'sf', connectionId)!;
    expect(renewed.credentials.token).toBe(sim.state.accessTokens.at(-1));
    expect(renewed.credentials.token).not.toBe(first.credentials.token);
    expect(sim.state.requests.filter((q) => q.path === '/odata/v2/User').at(-1)!.headers.authorization).toBe(
      `Bearer ${renewed.credentials.token}`,
    );
  });

  it('is refused clearly when the Integration key is not the registered one: nothing stored, no key or assertion text', async () => {
    const r = await connect('sf-wrong');
    expect(r.status).toBe(400);
    expect(r.text).toContain('did not accept this client ID');
    expect(r.text).not.toMatch(/PRIVATE KEY|saml2:Assertion|PHNhbWwy/);
    expect(r.connection()).toBeUndefined();
  });

  it('is refused when the user is not a SuccessFactors user ID, and keeps a typed host on the API servers', async () => {
    const wrongUser = await connect('sf', { userId: `nobody-${randomBytes(3).toString('hex')}` });
    expect(wrongUser.status).toBe(400);
    expect(wrongUser.connection()).toBeUndefined();
    const elsewhere = await connect('sf', { apiServer: 'attacker.example.com' });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.text).toContain('apiServer');
    const markup = await connect('sf', { userId: 'a<b' });
    expect(markup.status).toBe(400);
  });

  it('never logs an assertion, the key or a token (every line the replica wrote, at debug)', () => {
    const sentAssertions = tokenRequests().map((r) => r.form.get('assertion')!);
    expect(sentAssertions.length).toBeGreaterThanOrEqual(3);
    const keyBody = (pem: string) => pem.split('\n').filter((l) => l && !l.startsWith('-----'));
    const secrets = [
      ...sentAssertions.flatMap((a) => [a, a.slice(-16)]),
      ...sim.assertions.map((xml) => /<ds:SignatureValue>([^<]+)</.exec(xml)![1]!),
      ...keyBody(REGISTERED.key),
      ...keyBody(OTHER.key),
      ...sim.state.accessTokens,
    ];
    expect(logs.lines.length).toBeGreaterThan(0);
    expect(logs.leaks(secrets)).toEqual([]);
  });
});
