/**
 * Jira Data Center under a context path (issue #57): a server at https://jira.acme-corp.example/jira, which the
 * platform team names on the Integration as `host` and `contextPath: /jira` (the manifest's urlPath key). The
 * shipped manifest against the simulator serving every endpoint under /jira only (test/support/simulators/
 * jira-data-center.ts), in Chromium: the authorization, the token exchange, the refresh and a proxied call all reach
 * /jira/rest/...; a caller naming another context path is refused before anything is sent.
 */
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { startSimulatedProvidersBed, type SimulatedProvidersBed } from '../support/simulated-providers-bed.js';
import { paramsOf } from '../support/simulators/framework.js';
import { JIRA_DC_HOST, jiraDataCenter } from '../support/simulators/jira-data-center.js';

const kc = testKubeConfig();
const sim = jiraDataCenter({ contextPath: '/jira' });
const INTEGRATION = 'jira-data-center';
let providers: SimulatedProvidersBed;

beforeAll(async () => {
  providers = await startSimulatedProvidersBed(kc, 'jira-dc-ctx', [sim]);
}, 180_000);

afterAll(async () => {
  await providers?.close();
});

const call = (method: string, path: string, body?: unknown) => providers.callJson(method, path, body);

describe('Jira Data Center under a context path set on the Integration', () => {
  it('authorizes, exchanges, proxies and refreshes under /jira, and nothing reaches the host root', async () => {
    const before = sim.state.requests.length;
    const connectionId = await providers.connectInPopup(INTEGRATION, 'ada', JIRA_DC_HOST, (popup) =>
      expect(new URL(popup.url()).pathname).toBe('/jira/rest/oauth2/latest/authorize'),
    );
    const seen = sim.state.requests.slice(before);
    const authorize = seen.find((r) => r.path === '/jira/rest/oauth2/latest/authorize')!;
    expect(authorize.host).toBe(JIRA_DC_HOST);
    expect(authorize.query.get('code_challenge_method')).toBe('S256');
    const exchange = seen.find((r) => r.path === '/jira/rest/oauth2/latest/token')!;
    expect(exchange.host).toBe(JIRA_DC_HOST);
    expect(paramsOf(exchange).get('grant_type')).toBe('authorization_code');
    expect(paramsOf(exchange).get('client_secret')).toBe(sim.client.clientSecret);

    await eventually(() => providers.bed.latchkey.ctx.connections.getConnection(providers.bed.ns.name, INTEGRATION, connectionId));
    const fetched = await call('GET', `/connections/${connectionId}?provider_config_key=${INTEGRATION}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.connection_config).toEqual({ host: JIRA_DC_HOST, contextPath: '/jira' });
    const first = fetched.body.credentials.access_token as string;

    const proxied = await providers.call('GET', '/proxy/myself', {
      headers: { 'connection-id': connectionId, 'provider-config-key': INTEGRATION },
    });
    expect({ status: proxied.status, body: proxied.body }).toMatchObject({ status: 200, body: sim.e2e.api.answer });
    const api = sim.state.requests.at(-1)!;
    expect({ host: api.host, path: api.path, auth: api.headers.authorization }).toEqual({
      host: JIRA_DC_HOST,
      path: '/jira/rest/api/latest/myself',
      auth: `Bearer ${first}`,
    });

    const refreshed = await call('GET', `/connections/${connectionId}?provider_config_key=${INTEGRATION}&force_refresh=true`);
    expect(refreshed.status).toBe(200);
    const refresh = sim.state.requests.filter((r) => paramsOf(r).get('grant_type') === 'refresh_token').at(-1)!;
    expect({ host: refresh.host, path: refresh.path }).toEqual({ host: JIRA_DC_HOST, path: '/jira/rest/oauth2/latest/token' });
    expect(refreshed.body.credentials.access_token).not.toBe(first);
    expect(refreshed.body.credentials.access_token).toBe(sim.state.accessTokens.at(-1));

    // Every request the flow made went under the context path (Chromium's own /favicon.ico aside).
    const outside = sim.state.requests.slice(before).filter((r) => !r.path.startsWith('/jira/') && r.path !== '/favicon.ico');
    expect(outside.map((r) => r.path)).toEqual([]);
  });

  it('refuses an import naming another context path (400), sending nothing', async () => {
    const before = sim.state.requests.length;
    for (const contextPath of ['/other', '/..', '//attacker.example']) {
      const imported = await call('POST', '/connections', {
        provider_config_key: INTEGRATION,
        connection_id: 'imported-elsewhere',
        credentials: { type: 'OAUTH2', access_token: 'imported-access-token' },
        connection_config: { host: JIRA_DC_HOST, contextPath },
      });
      expect([contextPath, imported.status, imported.body.error?.code]).toEqual([contextPath, 400, 'invalid_connection_config']);
    }
    expect(sim.state.requests.length).toBe(before);
  });
});
