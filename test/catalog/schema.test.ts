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
});
