/**
 * Jira Data Center OAuth 2.0 end to end (issue #57, part 4): a self-managed server whose host the platform team
 * names on the Integration (`spec.connectionConfig.host`, the Provider's `setBy: integration` key), since the
 * Integration's client secret goes to that host's token endpoint. The shipped manifest against a simulator written
 * from Atlassian's pages (test/support/simulators/jira-data-center.ts), in Chromium: the end user is never asked for
 * the host, the authorization (PKCE S256) and token requests go to the Integration's host, the connection carries it
 * for the proxy and refreshes; a Connect start, a Connect session or an import naming another host is refused before
 * anything is sent, and an Integration without the host answers 409 integration_not_configured.
 */
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { createIntegration } from '../../dev/fixtures.js';
import { startSimulatedProvidersBed, type SimulatedProvidersBed } from '../support/simulated-providers-bed.js';
import { paramsOf } from '../support/simulators/framework.js';
import { JIRA_DC_HOST, jiraDataCenter } from '../support/simulators/jira-data-center.js';

const kc = testKubeConfig();
const sim = jiraDataCenter();
const INTEGRATION = 'jira-data-center';
const UNSET = 'jira-dc-unset';
let providers: SimulatedProvidersBed;

beforeAll(async () => {
  providers = await startSimulatedProvidersBed(kc, 'jira-dc-oauth', [sim]);
  // An Integration whose platform team has not named the server yet.
  await createIntegration(kc, providers.bed.ns.name, UNSET, { provider: 'jira-data-center' }, { ...sim.client });
  await providers.bed.synced((store) => store.catalog.getIntegration(providers.bed.ns.name, UNSET));
}, 180_000);

afterAll(async () => {
  await providers?.close();
});

const call = (method: string, path: string, body?: unknown) => providers.callJson(method, path, body);
/** An import of an OAUTH2 connection (POST /connections), with `connection_config` when given. */
const importConnection = (integration: string, connectionId: string, connectionConfig?: Record<string, string>) =>
  call('POST', '/connections', {
    provider_config_key: integration,
    connection_id: connectionId,
    credentials: { type: 'OAUTH2', access_token: 'imported-access-token' },
    ...(connectionConfig ? { connection_config: connectionConfig } : {}),
  });
const proxyMyself = (connectionId: string, integration = INTEGRATION) =>
  providers.call('GET', '/proxy/myself', { headers: { 'connection-id': connectionId, 'provider-config-key': integration } });

const connectStart = (integration: string, connectionConfig: Record<string, string>) =>
  providers.connectStart(integration, connectionConfig);

/** The integrations the Connect UI shows for a session offering `integration`. */
async function shownIn(integration: string): Promise<Array<{ id: string; fields: unknown[]; configFields: unknown[] }>> {
  const session = await providers.sessionToken(integration, 'viewer');
  const view = await fetch(`${providers.bed.latchkey.url}/connect/api/session`, { headers: { authorization: `Bearer ${session}` } });
  return ((await view.json()) as { data: { integrations: Array<{ id: string; fields: unknown[]; configFields: unknown[] }> } }).data
    .integrations;
}

describe('Jira Data Center: the host is set on the Integration', () => {
  it('connects in Chromium without asking the end user for the host, proxies /myself on that host and refreshes', async () => {
    const before = sim.state.requests.length;
    // Straight to the Jira server's consent page: no form, no host field.
    const connectionId = await providers.connectInPopup(INTEGRATION, 'ada', JIRA_DC_HOST);
    const seen = sim.state.requests.slice(before);
    const authorize = seen.find((r) => r.path === '/rest/oauth2/latest/authorize')!;
    expect(authorize.host).toBe(JIRA_DC_HOST);
    expect(authorize.query.get('code_challenge_method')).toBe('S256');
    expect(authorize.query.get('scope')).toBe('READ WRITE');
    const exchange = seen.find((r) => r.path === '/rest/oauth2/latest/token')!;
    expect(exchange.host).toBe(JIRA_DC_HOST);
    expect(paramsOf(exchange).get('client_secret')).toBe(sim.client.clientSecret);
    expect(paramsOf(exchange).get('code_verifier')).toBeTruthy();

    await eventually(() => providers.bed.latchkey.ctx.connections.getConnection(providers.bed.ns.name, INTEGRATION, connectionId));
    const fetched = await call('GET', `/connections/${connectionId}?provider_config_key=${INTEGRATION}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.connection_config).toEqual({ host: JIRA_DC_HOST });
    const first = fetched.body.credentials.access_token as string;
    expect(first).toBe(sim.state.accessTokens.at(-1));

    const proxied = await proxyMyself(connectionId);
    expect({ status: proxied.status, body: proxied.body }).toMatchObject({ status: 200, body: sim.e2e.api.answer });
    const api = sim.state.requests.filter((r) => r.path === '/rest/api/latest/myself').at(-1)!;
    expect(api.host).toBe(JIRA_DC_HOST);
    expect(api.headers.authorization).toBe(`Bearer ${first}`);

    const refreshed = await call('GET', `/connections/${connectionId}?provider_config_key=${INTEGRATION}&force_refresh=true`);
    expect(refreshed.status).toBe(200);
    const refresh = sim.state.requests.filter((r) => paramsOf(r).get('grant_type') === 'refresh_token').at(-1)!;
    expect(refresh.host).toBe(JIRA_DC_HOST);
    expect(refreshed.body.credentials.access_token).toBe(sim.state.accessTokens.at(-1));
    expect(refreshed.body.credentials.access_token).not.toBe(first);
    expect(refreshed.body.connection_config).toEqual({ host: JIRA_DC_HOST });
    expect((await proxyMyself(connectionId)).status).toBe(200);
  });

  it('refuses a Connect start or a Connect session naming another host (400), sending nothing anywhere', async () => {
    const before = sim.state.requests.length;
    const start = await connectStart(INTEGRATION, { host: 'jira.attacker.example' });
    expect(start.status).toBe(400);
    expect(start.body.error).toMatchObject({
      code: 'invalid_connection_config',
      errors: [{ path: 'connectionConfig.host', message: expect.stringContaining('set by the integration') }],
    });
    expect(JSON.stringify(start.body)).not.toContain('attacker');
    // The Integration's own value is no contradiction.
    expect((await connectStart(INTEGRATION, { host: JIRA_DC_HOST })).status).toBe(200);

    const session = await call('POST', '/connect/sessions', {
      end_user: { id: 'mallory' },
      allowed_integrations: [INTEGRATION],
      integrations_config_defaults: { [INTEGRATION]: { connection_config: { host: 'jira.attacker.example' } } },
    });
    expect(session.status).toBe(400);
    expect(session.body.error.code).toBe('invalid_body');
    expect(sim.state.requests.length).toBe(before);
  });

  it("an import: another host refused (400), none or the Integration's own stored as the Integration's", async () => {
    const other = await importConnection(INTEGRATION, 'imported-elsewhere', { host: 'jira.attacker.example' });
    expect(other.status).toBe(400);
    expect(other.body.error).toMatchObject({ code: 'invalid_connection_config' });
    expect(providers.bed.latchkey.ctx.connections.getConnection(providers.bed.ns.name, INTEGRATION, 'imported-elsewhere')).toBeUndefined();

    for (const [id, connection_config] of [
      ['imported-plain', undefined],
      ['imported-same', { host: JIRA_DC_HOST }],
    ] as const) {
      const imported = await importConnection(INTEGRATION, id, connection_config);
      expect(imported.status).toBe(201);
      const stored = await call('GET', `/connections/${id}?provider_config_key=${INTEGRATION}`);
      expect(stored.body.connection_config).toEqual({ host: JIRA_DC_HOST });
    }
    // Replacing the credentials of an imported connection may not move it either.
    const moved = await importConnection(INTEGRATION, 'imported-plain', { host: 'jira.attacker.example' });
    expect(moved.status).toBe(400);
  });

  it('an Integration without the host: unavailable in the Connect UI, 409 integration_not_configured on a start and an import', async () => {
    const before = sim.state.requests.length;
    // The Connect UI leaves out an integration that cannot work; the configured one asks for nothing.
    expect(await shownIn(UNSET)).toEqual([]);
    expect(await shownIn(INTEGRATION)).toEqual([expect.objectContaining({ id: INTEGRATION, fields: [], configFields: [] })]);

    const start = await connectStart(UNSET, {});
    expect(start.status).toBe(409);
    expect(start.body.error?.code).toBe('integration_not_configured');
    // The end user cannot fill the gap.
    expect((await connectStart(UNSET, { host: JIRA_DC_HOST })).status).toBe(409);

    const imported = await importConnection(UNSET, 'imported-unset', { host: JIRA_DC_HOST });
    expect(imported.status).toBe(409);
    expect(imported.body.error.code).toBe('integration_not_configured');
    expect(sim.state.requests.length).toBe(before);
  });
});
