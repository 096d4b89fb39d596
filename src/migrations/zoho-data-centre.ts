import type { ConnectionMigration } from './migration.js';

/** Zoho's data centres by the domain extension the old form offered: accounts server and API domain (https://www.zoho.com/crm/developer/docs/api/v8/multi-dc.html). */
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

/**
 * Zoho connections made when the end user typed a domain extension (`domainExtension: eu`) get the
 * keys the zoho-crm Provider now takes from Zoho itself: `accountsServer` (the redirect's
 * `accounts-server`) and `apiDomain` (the token answer's `api_domain`); `domainExtension` is dropped.
 * Without them such a connection has no token URL to refresh at and no API host to proxy to. A
 * connection with `accountsServer` already is done; an unknown extension is listed (reconnect it).
 */
export const zohoDataCentre: ConnectionMigration = {
  name: 'zoho-data-centre',
  summary: "Zoho connections' domainExtension becomes the accountsServer and apiDomain the Provider takes from Zoho",
  since: '0.2.0',
  args: '[provider ...]   the Providers to migrate (default: zoho-crm)',
  plan(c, args) {
    const providers = args.length ? args : ['zoho-crm'];
    const config = c.spec.connectionConfig;
    if (!providers.includes(c.spec.provider) || config?.domainExtension === undefined) return undefined;
    const next = zohoDataCentreConfig(config);
    if (next) {
      return {
        spec: { ...c.spec, connectionConfig: next },
        change: `connection configuration: domainExtension ${String(config.domainExtension)} replaced by accountsServer ${String(next.accountsServer)} and apiDomain ${String(next.apiDomain)}`,
      };
    }
    if (config.accountsServer === undefined)
      return { attention: `unknown Zoho domain extension ${JSON.stringify(config.domainExtension)}: reconnect it` };
    return undefined;
  },
};
