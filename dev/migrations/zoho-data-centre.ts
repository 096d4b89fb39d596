/**
 * One-off migration of stored connections (run once after upgrading, against the cluster): Zoho connections
 * made when the end user typed a domain extension (`domainExtension: eu`) get the keys the zoho-crm Provider
 * now takes from Zoho itself, `accountsServer` (the redirect's `accounts-server`) and `apiDomain` (the token
 * answer's `api_domain`), from Zoho's data centre table
 * (https://www.zoho.com/crm/developer/docs/api/v8/multi-dc.html); `domainExtension` is dropped. Without it
 * such a connection has no token URL to refresh at and no API host to proxy to. Idempotent: a connection
 * that has `accountsServer` already, or an unknown extension, is left as it is (and listed).
 *
 * Usage: node dist/dev/migrations/zoho-data-centre.js [--dry-run] [provider ...]   (default provider: zoho-crm)
 */
import { fileURLToPath } from 'node:url';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { GROUP, VERSION, type ConnectionResource } from '../../src/k8s/resources.js';

/** Zoho's data centres by the domain extension the old form offered: accounts server and API domain. */
export const ZOHO_DATA_CENTRES: Record<string, { accountsServer: string; apiDomain: string }> = {
  com: { accountsServer: 'accounts.zoho.com', apiDomain: 'www.zohoapis.com' },
  eu: { accountsServer: 'accounts.zoho.eu', apiDomain: 'www.zohoapis.eu' },
  in: { accountsServer: 'accounts.zoho.in', apiDomain: 'www.zohoapis.in' },
  'com.au': { accountsServer: 'accounts.zoho.com.au', apiDomain: 'www.zohoapis.com.au' },
  jp: { accountsServer: 'accounts.zoho.jp', apiDomain: 'www.zohoapis.jp' },
  ca: { accountsServer: 'accounts.zohocloud.ca', apiDomain: 'www.zohoapis.ca' },
  'com.cn': { accountsServer: 'accounts.zoho.com.cn', apiDomain: 'www.zohoapis.com.cn' },
  sa: { accountsServer: 'accounts.zoho.sa', apiDomain: 'www.zohoapis.sa' },
};

/** The migrated configuration, or undefined when there is nothing to do (or nothing known to do). */
export function zohoDataCentreConfig(config: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!config || typeof config.domainExtension !== 'string' || config.accountsServer !== undefined) return undefined;
  const centre = ZOHO_DATA_CENTRES[config.domainExtension];
  if (!centre) return undefined;
  const { domainExtension: _old, ...rest } = config;
  return { ...rest, ...centre };
}

export interface MigrationResult {
  migrated: string[];
  /** Connections with a domainExtension this table does not know: reconnect them. */
  unknown: string[];
}

/** Rewrites the connections of the given providers in every namespace (each with its resourceVersion: a concurrent write wins). */
export async function migrateZohoConnections(kc: KubeConfig, opts: { providers: string[]; dryRun?: boolean }): Promise<MigrationResult> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const list = (await custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'connections' })) as {
    items: ConnectionResource[];
  };
  const result: MigrationResult = { migrated: [], unknown: [] };
  for (const c of list.items) {
    if (!opts.providers.includes(c.spec.provider) || c.spec.connectionConfig?.domainExtension === undefined) continue;
    const name = `${c.metadata.namespace}/${c.metadata.name}`;
    const next = zohoDataCentreConfig(c.spec.connectionConfig);
    if (!next) {
      if (c.spec.connectionConfig?.accountsServer === undefined) result.unknown.push(name);
      continue;
    }
    if (!opts.dryRun) {
      await custom.replaceNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: c.metadata.namespace!,
        plural: 'connections',
        name: c.metadata.name!,
        body: { ...c, spec: { ...c.spec, connectionConfig: next } },
      });
    }
    result.migrated.push(name);
  }
  return result;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const dryRun = args.includes('--dry-run');
  const providers = args.filter((a) => a !== '--dry-run');
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const result = await migrateZohoConnections(kc, { providers: providers.length ? providers : ['zoho-crm'], dryRun });
  process.stdout.write(`${dryRun ? 'would migrate' : 'migrated'} ${result.migrated.length}: ${result.migrated.join(', ') || '-'}\n`);
  if (result.unknown.length) process.stdout.write(`unknown domain extension (reconnect these): ${result.unknown.join(', ')}\n`);
}
