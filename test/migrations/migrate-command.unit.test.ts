/** `latchkey migrate`'s arguments, its report, and the Zoho migration's plan for each kind of connection. */
import { formatReport, parseMigrateArgs } from '../../src/app/migrate.js';
import type { ConnectionResource } from '../../src/k8s/resources.js';
import { zohoDataCentre } from '../../src/migrations/zoho-data-centre.js';

const connection = (provider: string, connectionConfig: Record<string, unknown>) =>
  ({
    metadata: { namespace: 'shop', name: 'c1' },
    spec: { provider, integration: 'zoho', connectionId: 'u1', connectionConfig },
  }) as unknown as ConnectionResource;

describe('latchkey migrate', () => {
  it('takes a shipped migration, --dry-run, namespaces and its own arguments', () => {
    expect(parseMigrateArgs(['--list'])).toEqual({ list: true });
    expect(parseMigrateArgs(['zoho-data-centre', '--dry-run', '-n', 'a', '--namespace', 'b', 'zoho-crm-eu'])).toEqual({
      name: 'zoho-data-centre',
      dryRun: true,
      namespaces: ['a', 'b'],
      args: ['zoho-crm-eu'],
    });
    expect(parseMigrateArgs(['nope'])).toEqual({ error: expect.stringContaining('no migration named "nope"') });
    expect(parseMigrateArgs(['zoho-data-centre', '--force'])).toEqual({ error: expect.stringContaining('unknown option --force') });
    expect(parseMigrateArgs(['zoho-data-centre', '--namespace'])).toEqual({ error: expect.stringContaining('usage') });
    expect(parseMigrateArgs([])).toEqual({ error: expect.stringContaining('usage') });
  });

  it('reports what changed (or would) and what a person must do', () => {
    expect(
      formatReport({ migration: 'm', dryRun: true, changed: ['a/b'], attention: [{ connection: 'a/c', reason: 'reconnect it' }] }),
    ).toBe('m: would change 1 connection(s)\n  a/b\n1 connection(s) left as they are, to act on:\n  a/c: reconnect it');
  });
});

describe('zoho-data-centre', () => {
  it('replaces a known domain extension, lists an unknown one, and leaves the rest alone', () => {
    expect(zohoDataCentre.plan(connection('zoho-crm', { domainExtension: 'eu', other: 1 }), [])).toEqual({
      spec: expect.objectContaining({ connectionConfig: { other: 1, accountsServer: 'accounts.zoho.eu', apiDomain: 'www.zohoapis.eu' } }),
      change: 'connection configuration: domainExtension eu replaced by accountsServer accounts.zoho.eu and apiDomain www.zohoapis.eu',
    });
    expect(zohoDataCentre.plan(connection('zoho-crm', { domainExtension: 'mars' }), [])).toEqual({
      attention: 'unknown Zoho domain extension "mars": reconnect it',
    });
    expect(zohoDataCentre.plan(connection('zoho-crm', { accountsServer: 'accounts.zoho.eu' }), [])).toBeUndefined();
    expect(zohoDataCentre.plan(connection('zoho-crm', { domainExtension: 'eu', accountsServer: 'accounts.zoho.eu' }), [])).toBeUndefined();
    expect(zohoDataCentre.plan(connection('github', { domainExtension: 'eu' }), [])).toBeUndefined();
    // Other Providers only when named.
    expect(zohoDataCentre.plan(connection('zoho-books', { domainExtension: 'eu' }), ['zoho-books'])).toMatchObject({
      change: expect.any(String),
    });
    // A product on its own host (desk.zoho.eu) gets its Zoho domain; Canada, which its docs give no host for, is listed.
    expect(zohoDataCentre.plan(connection('zoho-desk', { domainExtension: 'eu', orgId: '1' }), ['zoho-desk'])).toEqual({
      spec: expect.objectContaining({ connectionConfig: { orgId: '1', accountsServer: 'accounts.zoho.eu', zohoDomain: 'zoho.eu' } }),
      change: 'connection configuration: domainExtension eu replaced by accountsServer accounts.zoho.eu and zohoDomain zoho.eu',
    });
    expect(zohoDataCentre.plan(connection('zoho-desk', { domainExtension: 'ca' }), ['zoho-desk'])).toEqual({
      attention: 'Zoho domain extension "ca": zoho-desk documents no host there: reconnect it',
    });
    expect(zohoDataCentre.plan(connection('zoho-sign', { domainExtension: 'ca' }), ['zoho-sign'])).toMatchObject({
      spec: { connectionConfig: { accountsServer: 'accounts.zohocloud.ca', zohoDomain: 'zohocloud.ca' } },
    });
  });
});
