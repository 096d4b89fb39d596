/**
 * Every manifest of the shipped catalog is accepted by the real API server (the CRD's OpenAPI schema
 * and CEL rules), with strict field validation so that nothing would be silently pruned; what is
 * stored reads back unchanged.
 */
import { randomBytes } from 'node:crypto';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { apiMessage, statusOf } from '../../src/k8s/errors.js';
import { GROUP, VERSION } from '../../src/k8s/resources.js';
import { testKubeConfig } from '../../dev/cluster.js';
import { readCatalog, type ProviderManifest } from '../support/catalog-files.js';

const kc = testKubeConfig();
const custom = kc.makeApiClient(CustomObjectsApi);
const catalog = readCatalog();
const run = randomBytes(3).toString('hex');
const RUN_LABEL = 'latchkey.dev/catalog-test-run';
/** Stored copies get a per-run name so parallel test files that use real provider names are not disturbed. */
const storedName = (name: string) => `${name}.catalog-${run}`;

/** Runs `fn` over `items` with at most `limit` in flight. */
async function inBatches<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

async function create(
  m: ProviderManifest,
  opts: { dryRun: boolean; name?: string; labels?: Record<string, string> },
): Promise<string | undefined> {
  const body = { ...m, metadata: { ...m.metadata, name: opts.name ?? m.metadata.name, labels: opts.labels } };
  try {
    await custom.createClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: 'providers',
      body,
      fieldValidation: 'Strict',
      ...(opts.dryRun ? { dryRun: 'All' } : {}),
    });
    return undefined;
  } catch (err) {
    // A dry run of a name that exists already (another test applied it) still validated the object.
    if (opts.dryRun && statusOf(err) === 409) return undefined;
    return `${m.metadata.name}: ${statusOf(err)} ${apiMessage(err)}`;
  }
}

afterAll(async () => {
  await custom
    .deleteCollectionClusterCustomObject({ group: GROUP, version: VERSION, plural: 'providers', labelSelector: `${RUN_LABEL}=${run}` })
    .catch(() => undefined);
});

describe('provider catalog on the API server', () => {
  it('accepts every manifest under its own name (server-side dry run, strict field validation)', async () => {
    expect(catalog.length).toBeGreaterThanOrEqual(120);
    const failures = (await inBatches(catalog, 8, (m) => create(m, { dryRun: true }))).filter(Boolean);
    expect(failures).toEqual([]);
  });

  it('stores every manifest and reads each back unchanged', async () => {
    const failures = (
      await inBatches(catalog, 8, (m) => create(m, { dryRun: false, name: storedName(m.metadata.name), labels: { [RUN_LABEL]: run } }))
    ).filter(Boolean);
    expect(failures).toEqual([]);

    const list = (await custom.listClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: 'providers',
      labelSelector: `${RUN_LABEL}=${run}`,
    })) as { items: ProviderManifest[] };
    expect(list.items).toHaveLength(catalog.length);
    const stored = new Map(list.items.map((p) => [p.metadata.name, p]));
    for (const m of catalog) {
      // Compare through JSON so that only what the API server keeps counts (no pruning, no defaulting).
      expect([m.metadata.name, stored.get(storedName(m.metadata.name))?.spec]).toEqual([
        m.metadata.name,
        JSON.parse(JSON.stringify(m.spec)),
      ]);
    }
    for (const name of ['github', 'trello', 'stripe', 'salesforce']) {
      const one = (await custom.getClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: 'providers',
        name: storedName(name),
      })) as ProviderManifest;
      expect(one.spec).toEqual(catalog.find((m) => m.metadata.name === name)!.spec);
    }
  });

  it('would catch a broken manifest: the same validation rejects an unknown field and a missing OAuth 1 URL', async () => {
    const trello = catalog.find((m) => m.metadata.name === 'trello')!;
    const unknownField = await create(
      { ...trello, spec: { ...trello.spec, proxy: { ...trello.spec.proxy, baseURL: 'https://x' } as never } },
      { dryRun: true, name: `broken-${run}` },
    );
    expect(unknownField).toMatch(/unknown field "spec\.proxy\.baseURL"/);
    const { requestTokenUrl: _omitted, ...withoutRequestToken } = trello.spec;
    const missing = await create(
      { ...trello, spec: withoutRequestToken as ProviderManifest['spec'] },
      { dryRun: true, name: `broken-${run}` },
    );
    expect(missing).toMatch(/OAUTH1 providers need requestTokenUrl/);
  });

  it('takes proxy.body (the credential in a JSON body) with a POST verification only, and refuses an empty field name', async () => {
    const mandrill = catalog.find((m) => m.metadata.name === 'mandrill')!;
    const dryRun = { dryRun: true, name: `body-${run}` };
    const withCheck = (method: string) => ({
      ...mandrill,
      spec: { ...mandrill.spec, verification: { ...mandrill.spec.verification!, method } },
    });
    expect(await create(withCheck('GET') as ProviderManifest, dryRun)).toMatch(/a provider with proxy\.body checks credentials with POST/);
    expect(await create(withCheck('POST') as ProviderManifest, dryRun)).toBeUndefined();
    const emptyName = { ...mandrill, spec: { ...mandrill.spec, proxy: { ...mandrill.spec.proxy, body: { '': '${apiKey}' } } } };
    expect(await create(emptyName as ProviderManifest, dryRun)).toMatch(/proxy\.body field names are 1 to 128 characters/);
  });

  describe('the fields for values the provider returns (issue #43)', () => {
    const base = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'Provider',
      metadata: { name: `answers-${run}` },
    };
    const spec = (extra: Record<string, unknown> = {}) => ({
      displayName: 'Answers',
      authMode: 'OAUTH2',
      authorizationUrl: 'https://auth.example.com/authorize',
      tokenUrl: 'https://auth.example.com/token',
      proxy: { baseUrl: 'https://${connectionConfig.instanceHost}' },
      tokenResponse: {
        docs: ['https://example.com/docs'],
        errorWhen: { path: 'ok', equals: false },
        errorCodePath: 'error',
        tokenPath: 'authed_user',
        expiresInZeroMeansNever: true,
      },
      connectionConfiguration: [
        { name: 'instanceHost', hostSuffixes: ['example.com'], from: { tokenResponse: 'instance_url', as: 'host' } },
        { name: 'realmId', pattern: '[0-9]{1,32}', from: { callback: 'realmId' } },
        { name: 'cloudId', from: { step: 'sites', path: 'id' } },
        { name: 'region', enum: ['eu'], from: { callback: 'accounts-server', as: 'host', match: '^accounts\\.example\\.(.+)$' } },
      ],
      postConnection: {
        name: 'example-sites',
        steps: [
          {
            name: 'sites',
            url: 'https://api.example.com/sites',
            items: '',
            several: 'first',
            headers: { Authorization: 'OAuth ${accessToken}' },
          },
          { name: 'org', method: 'POST', url: 'https://api.example.com/graphql', body: '{"query":"{ organization { id } }"}' },
          { name: 'accounts', url: 'https://api.example.com/userinfo', items: 'accounts', pick: { path: 'is_default', equals: true } },
        ],
      },
      ...extra,
    });
    const tryCreate = (s: Record<string, unknown>) => create({ ...base, spec: s } as unknown as ProviderManifest, { dryRun: true });
    const withConfig = (field: Record<string, unknown>) =>
      spec({
        connectionConfiguration: [{ name: 'instanceHost', hostSuffixes: ['example.com'], from: { tokenResponse: 'instance_url' } }, field],
      });

    it('accepts tokenResponse, from (token answer, callback, step) and postConnection', async () => {
      expect(await tryCreate(spec())).toBeUndefined();
    });

    it('refuses a from.step naming no step, a from with two sources or none, and a step path without a step', async () => {
      expect(await tryCreate(withConfig({ name: 'cloudId', from: { step: 'nosuch', path: 'id' } }))).toMatch(
        /names a step of postConnection\.steps/,
      );
      expect(await tryCreate(withConfig({ name: 'cloudId', from: { tokenResponse: 'a', callback: 'b' } }))).toMatch(/exactly one of/);
      expect(await tryCreate(withConfig({ name: 'cloudId', from: {} }))).toMatch(/exactly one of/);
      expect(await tryCreate(withConfig({ name: 'cloudId', from: { tokenResponse: 'a', path: 'id' } }))).toMatch(/from\.path/);
      expect(await tryCreate(withConfig({ name: 'cloudId', from: { step: 'sites' } }))).toMatch(/from\.path/);
    });

    it('refuses the OAuth parameters as callback values, empty paths, an unknown several and as', async () => {
      expect(await tryCreate(withConfig({ name: 'realmId', from: { callback: 'code' } }))).toMatch(/cannot be an OAuth parameter/);
      expect(await tryCreate(withConfig({ name: 'realmId', from: { tokenResponse: '' } }))).toMatch(/tokenResponse/);
      expect(await tryCreate(withConfig({ name: 'realmId', from: { tokenResponse: 'a..b' } }))).toMatch(/tokenResponse/);
      expect(await tryCreate(withConfig({ name: 'realmId', from: { tokenResponse: 'a', as: 'url' } }))).toMatch(/as/);
      expect(await tryCreate(spec({ tokenResponse: { tokenPath: '' } }))).toMatch(/tokenPath/);
      const step = { name: 'sites', url: 'https://api.example.com/sites', several: 'all' };
      expect(await tryCreate(spec({ postConnection: { name: 'x', steps: [step] } }))).toMatch(/several/);
    });

    it('refuses a returned value in the authorization or token URL, and a relative step without proxy.baseUrl', async () => {
      expect(await tryCreate(spec({ authorizationUrl: 'https://${connectionConfig.instanceHost}/authorize' }))).toMatch(
        /authorizationUrl cannot use a value the provider returns/,
      );
      expect(await tryCreate(spec({ tokenUrl: 'https://${connectionConfig.instanceHost}/token' }))).toMatch(
        /tokenUrl can use only the callback/,
      );
      // The callback comes before the token request: its values may be in the token URL (Zoho's accounts server).
      expect(await tryCreate(spec({ tokenUrl: 'https://${connectionConfig.realmId}.example.com/token' }))).toBeUndefined();
      const { proxy: _p, ...noProxy } = spec({
        connectionConfiguration: [{ name: 'cloudId', from: { step: 'sites', path: 'id' } }],
        postConnection: { name: 'x', steps: [{ name: 'sites', url: '/sites' }] },
      });
      expect(await tryCreate(noProxy)).toMatch(/relative url needs proxy\.baseUrl/);
    });

    it("refuses a step's body without POST and a pick without items", async () => {
      const sites = { name: 'sites', url: 'https://api.example.com/sites', items: '' };
      const body = { name: 'org', url: 'https://api.example.com/graphql', body: '{}' };
      expect(await tryCreate(spec({ postConnection: { name: 'x', steps: [sites, body] } }))).toMatch(/body goes with method POST/);
      expect(await tryCreate(spec({ postConnection: { name: 'x', steps: [sites, { ...body, method: 'POST' }] } }))).toBeUndefined();
      const pick = { name: 'me', url: 'https://api.example.com/me', pick: { path: 'is_default', equals: true } };
      expect(await tryCreate(spec({ postConnection: { name: 'x', steps: [sites, pick] } }))).toMatch(/pick chooses among/);
    });

    it('refuses the new fields on a provider that is not OAUTH2', async () => {
      const apiKey = { displayName: 'K', authMode: 'API_KEY' };
      expect(await tryCreate({ ...apiKey, tokenResponse: { tokenPath: 'a' } })).toMatch(/only for OAUTH2 providers/);
      expect(await tryCreate({ ...apiKey, connectionConfiguration: [{ name: 'a', from: { tokenResponse: 'a' } }] })).toMatch(
        /from is only for OAUTH2 providers/,
      );
    });
  });
});
