/**
 * Values that change and scopes that grow (issue #57), against doc-true simulators of real providers
 * (test/support/simulators) and the shipped manifests, over HTTP as a browser would run the Connect flow
 * (the simulator's consent page followed by its `#allow` link):
 * - Pipedrive's refresh answer carries a new `api_domain`: the connection's companyDomain follows, with an
 *   operation-log entry;
 * - the scopes granted are recorded from the token answer (Google, Pipedrive) or, when it has none, from
 *   those requested (HubSpot), and shown by GET /connections/{id};
 * - a reconnect session asking for more scopes (Nango's integrations_config_defaults) sends Google's
 *   include_granted_scopes and records the union Google granted;
 * - GitHub's 403 with X-Accepted-OAuth-Scopes comes back with an error naming the missing scope, Box's RFC 6750
 *   insufficient_scope challenge (which names none) with an error saying so.
 */
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration } from '../../dev/fixtures.js';
import { createGuardedFetch, type GuardedFetch } from '../../src/egress/fetch.js';
import { catalogSpec } from '../support/catalog-files.js';
import { startConnectBed, type ConnectBed } from '../support/connect-bed.js';
import { startSimulators, type ProviderSimulator, type SimulatorHost } from '../support/simulators/framework.js';
import { box } from '../support/simulators/box.js';
import { github } from '../support/simulators/github.js';
import { googleCalendar } from '../support/simulators/google.js';
import { hubspot } from '../support/simulators/hubspot.js';
import { pipedrive, RENAMED_API_DOMAIN, type PipedriveCompany } from '../support/simulators/pipedrive.js';

const kc = testKubeConfig();
const company: PipedriveCompany = { apiDomain: 'https://acme-sales.pipedrive.com' };
const sims: Record<string, ProviderSimulator> = {
  pipedrive: pipedrive(company),
  'google-calendar': googleCalendar(),
  hubspot: hubspot(),
  github: github(),
  box: box(),
};
const CALENDAR_READ = 'https://www.googleapis.com/auth/calendar.readonly';
const CALENDAR_EVENTS = 'https://www.googleapis.com/auth/calendar.events';

let host: SimulatorHost;
let bed: ConnectBed;
let browser: GuardedFetch;

beforeAll(async () => {
  host = await startSimulators(Object.values(sims));
  bed = await startConnectBed(kc, 'scopes-values', 'development', { egress: host.egressGuard() });
  // The end user's side of the simulated providers: their hosts resolve to the simulator, its CA trusted.
  browser = createGuardedFetch(host.egressGuard(), { ca: host.ca });
  for (const [name, sim] of Object.entries(sims)) {
    // The shipped manifest under its shipped name (shared with other files of the run: never deleted here).
    await applyProvider(kc, name, catalogSpec(name));
    await createIntegration(kc, bed.ns.name, name, { provider: name }, { ...sim.client });
  }
  await bed.synced((store) =>
    Object.keys(sims).every(
      (name) =>
        store.catalog.getProvider(name) &&
        store.catalog.getIntegration(bed.ns.name, name) &&
        store.catalog.readSecretValue(bed.ns.name, `${name}-client`, 'clientId'),
    ),
  );
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await bed?.close();
  await host?.close();
});

const api = (method: string, path: string, body?: unknown) => bed.latchkey.call(method, path, { key: bed.env.secretKey, body });

/** A session token from the REST API (`reconnect`: a reconnect session) with Nango's integrations_config_defaults. */
async function session(integration: string, endUser: string, opts: { reconnect?: string; defaults?: unknown } = {}): Promise<string> {
  const body = opts.reconnect
    ? { connection_id: opts.reconnect, integration_id: integration }
    : { end_user: { id: endUser }, allowed_integrations: [integration] };
  const res = await api('POST', opts.reconnect ? '/connect/sessions/reconnect' : '/connect/sessions', {
    ...body,
    ...(opts.defaults ? { integrations_config_defaults: opts.defaults } : {}),
  });
  expect(res.status).toBe(201);
  return res.body.data.token as string;
}

/**
 * The Connect flow as the browser runs it: oauth/start, the provider's authorization URL (its consent
 * page), its `#allow` link back to Latchkey's callback with the flow's cookie. Returns the authorization URL.
 */
async function connect(integration: string, token: string): Promise<URL> {
  const start = await fetch(`${bed.latchkey.url}/connect/api/oauth/start`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ integration, connectionConfig: {} }),
  });
  expect(start.status).toBe(200);
  const authorize = new URL(((await start.json()) as { data: { url: string } }).data.url);
  const cookie = start.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const consent = await browser.fetch(authorize);
  expect(consent.status).toBe(200);
  const allow = /id="allow" href="([^"]+)"/.exec(await consent.text())![1]!.replace(/&amp;/g, '&');
  const callback = await fetch(allow, { headers: { cookie } });
  expect(callback.status).toBe(200);
  return authorize;
}

async function connectionOf(integration: string, endUser: string) {
  const id = await eventually(
    () =>
      bed.latchkey.ctx.connectionScans
        .listConnections(bed.ns.name)
        .find((c) => c.spec.endUser?.id === endUser && c.spec.integration === integration)?.spec.connectionId,
  );
  const res = await api('GET', `/connections/${encodeURIComponent(id)}?provider_config_key=${integration}`);
  expect(res.status).toBe(200);
  return res.body;
}

describe('scopes granted', () => {
  it("records the token answer's scope (Pipedrive's commas) and shows it beside the credentials", async () => {
    await connect('pipedrive', await session('pipedrive', 'pd-user'));
    const conn = await connectionOf('pipedrive', 'pd-user');
    expect(conn.granted_scopes).toEqual(['base', 'deals:read']);
    expect(conn.credentials.granted_scopes).toBeUndefined();
    expect(conn.connection_config).toEqual({ companyDomain: 'acme-sales' });
  });

  it('records the scopes requested when the answer has none (HubSpot)', async () => {
    await connect('hubspot', await session('hubspot', 'hs-user'));
    const conn = await connectionOf('hubspot', 'hs-user');
    expect(conn.credentials.raw.scope).toBeUndefined();
    expect(conn.granted_scopes).toEqual(catalogSpec('hubspot').defaultScopes);
    const dashboard = await bed.latchkey.ctx.connections.findConnection(bed.ns.name, 'hubspot', conn.connection_id);
    expect(dashboard?.credentials.granted_scopes).toEqual(catalogSpec('hubspot').defaultScopes);
  });
});

describe('a reconnect that asks for more scopes', () => {
  it("sends Google's include_granted_scopes and records the union Google granted", async () => {
    const first = await connect('google-calendar', await session('google-calendar', 'g-user'));
    expect(first.searchParams.get('scope')).toBe(CALENDAR_READ);
    expect(first.searchParams.get('include_granted_scopes')).toBe('true');
    const before = await connectionOf('google-calendar', 'g-user');
    expect(before.granted_scopes).toEqual([CALENDAR_READ]);

    const token = await session('google-calendar', 'g-user', {
      reconnect: before.connection_id,
      defaults: { 'google-calendar': { connection_config: { oauth_scopes_override: CALENDAR_EVENTS } } },
    });
    const again = await connect('google-calendar', token);
    expect(again.searchParams.get('scope')).toBe(CALENDAR_EVENTS);
    expect(again.searchParams.get('include_granted_scopes')).toBe('true');
    const after = await connectionOf('google-calendar', 'g-user');
    expect(after.connection_id).toBe(before.connection_id);
    expect([...after.granted_scopes].sort()).toEqual([CALENDAR_EVENTS, CALENDAR_READ].sort());
  });

  it('refuses defaults for an integration the session does not offer, and parameters the flow sets itself', async () => {
    const stray = await api('POST', '/connect/sessions', {
      end_user: { id: 'x' },
      allowed_integrations: ['github'],
      integrations_config_defaults: { hubspot: { connection_config: { oauth_scopes_override: 'oauth' } } },
    });
    expect(stray.status).toBe(400);
    expect(stray.body.error.message).toContain('hubspot');
    const reserved = await api('POST', '/connect/sessions', {
      end_user: { id: 'x' },
      allowed_integrations: ['github'],
      integrations_config_defaults: { github: { authorization_params: { redirect_uri: 'https://evil.example' } } },
    });
    expect(reserved.status).toBe(400);
    const unread = await api('POST', '/connect/sessions', {
      end_user: { id: 'x' },
      allowed_integrations: ['github'],
      integrations_config_defaults: { github: { user_scopes: 'chat:write' } },
    });
    expect(unread.status).toBe(400);
  });
});

describe('values that change', () => {
  it("stores the new api_domain Pipedrive's refresh answer carries, with an operation-log entry", async () => {
    await connect('pipedrive', await session('pipedrive', 'pd-rename'));
    const conn = await connectionOf('pipedrive', 'pd-rename');
    expect(conn.connection_config).toEqual({ companyDomain: 'acme-sales' });
    company.apiDomain = RENAMED_API_DOMAIN;
    try {
      const refreshed = await api('GET', `/connections/${conn.connection_id}?provider_config_key=pipedrive&force_refresh=true`);
      expect(refreshed.status).toBe(200);
      expect(refreshed.body.connection_config).toEqual({ companyDomain: 'acme-renamed' });
      const stored = await bed.latchkey.ctx.connections.findConnection(bed.ns.name, 'pipedrive', conn.connection_id);
      expect(stored?.resource.spec.connectionConfig).toEqual({ companyDomain: 'acme-renamed' });
      // The proxy follows: the deals call goes to the renamed company's domain.
      const deals = await bed.latchkey.call('GET', '/proxy/v1/deals?limit=10', {
        key: bed.env.secretKey,
        headers: { 'connection-id': conn.connection_id, 'provider-config-key': 'pipedrive' },
      });
      expect(deals.status).toBe(200);
      expect(sims.pipedrive!.state.requests.at(-1)?.host).toBe('acme-renamed.pipedrive.com');
      const logs = await eventually(async () => {
        const res = await api('GET', `/logs?integration=pipedrive&connection_id=${conn.connection_id}&operation=refresh`);
        const entries = (res.body.logs ?? []) as Array<{ step: string; messages: string[] }>;
        return entries.find((e) => e.step === 'provider_values');
      });
      expect(logs.messages.join(' ')).toContain('companyDomain changed from "acme-sales" to "acme-renamed"');
    } finally {
      company.apiDomain = 'https://acme-sales.pipedrive.com';
    }
  });
});

describe('a call the grant does not cover', () => {
  it("answers GitHub's 403 with X-Accepted-OAuth-Scopes with the upstream status and the missing scope named", async () => {
    await connect('github', await session('github', 'gh-user'));
    const conn = await connectionOf('github', 'gh-user');
    expect(conn.granted_scopes).toEqual(['read:user', 'user:email']);
    const res = await bed.latchkey.call('POST', '/proxy/user/repos', {
      key: bed.env.secretKey,
      headers: { 'connection-id': conn.connection_id, 'provider-config-key': 'github', 'user-agent': 'latchkey-test' },
      body: { name: 'hello-world' },
    });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('insufficient_scope');
    expect(res.body.error.message).toContain('lacks one of the scopes "public_repo", "repo"');
    expect(res.body.error.message).toContain('granted: read:user user:email');
    expect(res.headers.get('x-accepted-oauth-scopes')).toBe('public_repo, repo');
    // No token in the answer.
    for (const token of sims.github!.state.accessTokens) expect(JSON.stringify(res.body)).not.toContain(token);
  });

  it("answers Box's 403 with an RFC 6750 insufficient_scope challenge as insufficient_scope, the challenge passed on", async () => {
    await connect('box', await session('box', 'box-user'));
    const conn = await connectionOf('box', 'box-user');
    const res = await bed.latchkey.call('GET', '/proxy/2.0/users', {
      key: bed.env.secretKey,
      headers: { 'connection-id': conn.connection_id, 'provider-config-key': 'box' },
    });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('insufficient_scope');
    expect(res.body.error.message).toContain("Box refused the call: the connection's grant lacks a scope it does not name.");
    expect(res.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    for (const token of sims.box!.state.accessTokens) expect(JSON.stringify(res.body)).not.toContain(token);
  });
});
