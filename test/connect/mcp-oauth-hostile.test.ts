/**
 * Hostile remote MCP servers at an MCP_OAUTH2 Connect start: metadata naming another issuer, an
 * authorization server at an internal address (the egress guard), an oversized metadata document, a
 * registration answer without `client_id`, an authorization server without PKCE S256. Each is refused
 * with a clear error, no client registration is kept and no connection is made; a well-behaved
 * server's Integration in the same namespace still starts. The hostile servers are hand-written
 * (no real server misbehaves on purpose); the well-behaved one is the SDK bed with oidc-provider.
 */
import { createServer, type Server } from 'node:http';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../src/k8s/resources.js';
import { testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration, deleteProvider } from '../../dev/fixtures.js';
import { registrationsSecretName } from '../../src/k8s/client-registrations.js';
import { startConnectBed, type ConnectBed } from '../support/connect-bed.js';
import { sealSession } from '../support/fixtures.js';
import { startMcpServerBed, type McpServerBed } from '../support/mcp-server-bed.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const CASES = ['other-issuer', 'internal-address', 'oversized', 'no-client-id', 'no-pkce'] as const;
type Case = (typeof CASES)[number];

let bed: ConnectBed;
let good: McpServerBed;
let hostile: Server;
let origin = '';
const registrationCalls: Case[] = [];

/** One hostile server; each case lives under `/<case>/`: its MCP endpoint, its metadata and its authorization server. */
function route(body: string): { status: number; body: string } {
  return { status: 200, body };
}

function answer(c: Case, rest: string): { status: number; body?: string; headers?: Record<string, string> } {
  const base = `${origin}/${c}`;
  if (rest === 'mcp')
    return { status: 401, headers: { 'www-authenticate': `Bearer error="invalid_token", resource_metadata="${base}/prm"` }, body: '{}' };
  if (rest === 'prm') {
    const servers = c === 'internal-address' ? ['https://169.254.169.254/latest'] : [base];
    const doc: Record<string, unknown> = { resource: `${base}/mcp`, authorization_servers: servers, scopes_supported: ['mcp:tools'] };
    if (c === 'oversized') doc.padding = 'x'.repeat(200 * 1024);
    return route(JSON.stringify(doc));
  }
  if (rest === 'register') {
    registrationCalls.push(c);
    return { status: 201, body: JSON.stringify({ client_name: 'no id here', redirect_uris: ['x'] }) };
  }
  return { status: 404 };
}

function asMetadata(c: Case): string {
  const base = `${origin}/${c}`;
  return JSON.stringify({
    issuer: c === 'other-issuer' ? 'https://login.example.com' : base,
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    registration_endpoint: `${base}/register`,
    code_challenge_methods_supported: c === 'no-pkce' ? ['plain'] : ['S256'],
    response_types_supported: ['code'],
  });
}

beforeAll(async () => {
  hostile = createServer((req, res) => {
    const url = new URL(req.url ?? '/', origin);
    const wellKnown = /^\/\.well-known\/(oauth-authorization-server|openid-configuration)\/([a-z-]+)$/.exec(url.pathname);
    const c = (wellKnown?.[2] ?? url.pathname.split('/')[1]) as Case;
    if (!CASES.includes(c)) return res.writeHead(404).end();
    const out = wellKnown ? { status: 200, body: asMetadata(c) } : answer(c, url.pathname.split('/').slice(2).join('/'));
    req.resume();
    res.writeHead(out.status, { 'content-type': 'application/json', ...('headers' in out ? out.headers : {}) }).end(out.body);
  });
  await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(hostile.address() as { port: number }).port}`;
  bed = await startConnectBed(kc, 'connect-mcp-hostile', 'development');
  good = await startMcpServerBed();
  for (const c of CASES) {
    await applyProvider(kc, `mcp-${c}-${process.pid}`, {
      displayName: `MCP ${c}`,
      authMode: 'MCP_OAUTH2',
      mcp: { serverUrl: `${origin}/${c}/mcp` },
    });
    await createIntegration(kc, bed.ns.name, c, { provider: `mcp-${c}-${process.pid}` });
  }
  await applyProvider(kc, `mcp-good-${process.pid}`, { displayName: 'MCP good', authMode: 'MCP_OAUTH2', mcp: { serverUrl: good.url } });
  await createIntegration(kc, bed.ns.name, 'good', { provider: `mcp-good-${process.pid}` });
  await bed.synced(
    (store) => CASES.every((c) => store.catalog.getIntegration(bed.ns.name, c)) && store.catalog.getProvider(`mcp-good-${process.pid}`),
  );
});

afterAll(async () => {
  for (const c of CASES) await deleteProvider(kc, `mcp-${c}-${process.pid}`).catch(() => undefined);
  await deleteProvider(kc, `mcp-good-${process.pid}`).catch(() => undefined);
  await good?.close();
  await bed?.close();
  await new Promise<void>((r) => hostile?.close(() => r()));
});

async function start(
  integration: string,
): Promise<{ status: number; body: { data?: { url: string }; error?: { code: string; message: string } } }> {
  const token = sealSession(bed.env.secretKey, {
    namespace: bed.ns.name,
    endUser: { id: 'u-hostile' },
    allowedIntegrations: [integration],
  });
  const res = await fetch(`${bed.latchkey.url}/connect/api/oauth/start`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ integration }),
  });
  return { status: res.status, body: (await res.json()) as never };
}

async function registrationsKept(integration: string): Promise<boolean> {
  try {
    await core.readNamespacedSecret({ namespace: bed.ns.name, name: registrationsSecretName(integration) });
    return true;
  } catch {
    return false;
  }
}

describe('hostile MCP servers at the Connect start', () => {
  it.each([
    ['other-issuer', 'mcp_discovery_refused', 'names another issuer'],
    ['internal-address', 'mcp_discovery_refused', 'may not reach'],
    ['oversized', 'provider_answer_too_large', 'larger than'],
    ['no-client-id', 'mcp_discovery_refused', 'without a client_id'],
    ['no-pkce', 'mcp_discovery_refused', 'PKCE S256'],
  ] as const)('%s: refused (%s), nothing kept', async (c, code, words) => {
    const { status, body } = await start(c);
    expect(status).toBe(502);
    expect(body.error?.code).toBe(code);
    expect(body.error?.message).toContain(words);
    expect(await registrationsKept(c)).toBe(false);
    const connections = (await custom.listNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: bed.ns.name,
      plural: 'connections',
    })) as {
      items: unknown[];
    };
    expect(connections.items).toEqual([]);
  });

  it('registered nowhere but at the registration endpoint of the case that got that far', () => {
    expect(registrationCalls).toEqual(['no-client-id']);
  });

  it('a well-behaved server in the same namespace still starts', async () => {
    const { status, body } = await start('good');
    expect(status).toBe(200);
    const url = new URL(body.data!.url);
    expect(url.origin).toBe(good.oidc.issuer);
    expect(url.searchParams.get('resource')).toBe(good.url);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(await registrationsKept('good')).toBe(true);
  });
});
