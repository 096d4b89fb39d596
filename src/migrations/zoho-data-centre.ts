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

/**
 * The shipped Providers of products on their own hosts (desk.zoho.eu ...): they take `zohoDomain` (zoho.eu) from
 * the accounts server, not `apiDomain`. An extension their docs name no host for is listed instead: Canada for all
 * but Sign (sign.zohocloud.ca), China for Sign (https://www.zoho.com/sign/api/api-endpoint.html).
 */
const OWN_HOST_PROVIDERS: Record<string, Record<string, string | undefined>> = Object.fromEntries([
  ...['zoho-calendar', 'zoho-desk', 'zoho-mail', 'zoho-people', 'zoho-projects', 'zoho-recruit'].map((p) => [p, { ca: undefined }]),
  ['zoho-sign', { ca: 'zohocloud.ca', 'com.cn': undefined }],
]);

/** The migrated configuration, or undefined when there is nothing to do (or nothing known to do). */
export function zohoDataCentreConfig(
  config: Record<string, unknown> | undefined,
  provider = 'zoho-crm',
): Record<string, unknown> | undefined {
  if (!config || typeof config.domainExtension !== 'string' || config.accountsServer !== undefined) return undefined;
  const centre = ZOHO_DATA_CENTRES[config.domainExtension];
  if (!centre) return undefined;
  const { domainExtension: _old, ...rest } = config;
  const ownHost = OWN_HOST_PROVIDERS[provider];
  if (!ownHost) return { ...rest, ...centre };
  const zohoDomain = config.domainExtension in ownHost ? ownHost[config.domainExtension] : `zoho.${config.domainExtension}`;
  return zohoDomain === undefined ? undefined : { ...rest, accountsServer: centre.accountsServer, zohoDomain };
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
    const next = zohoDataCentreConfig(config, c.spec.provider);
    if (next) {
      return {
        spec: { ...c.spec, connectionConfig: next },
        change: `connection configuration: domainExtension ${String(config.domainExtension)} replaced by accountsServer ${String(next.accountsServer)} and ${next.zohoDomain === undefined ? `apiDomain ${String(next.apiDomain)}` : `zohoDomain ${String(next.zohoDomain)}`}`,
      };
    }
    if (config.accountsServer === undefined)
      return {
        attention: ZOHO_DATA_CENTRES[String(config.domainExtension)]
          ? `Zoho domain extension ${JSON.stringify(config.domainExtension)}: ${c.spec.provider} documents no host there: reconnect it`
          : `unknown Zoho domain extension ${JSON.stringify(config.domainExtension)}: reconnect it`,
      };
    return undefined;
  },
};
