/**
 * Every shipped Zoho Provider, for an account in Canada and one in the EU: the values taken from the redirect's
 * `accounts-server` and the token answer's `api_domain`, the token URL and the API base they give, against the
 * full URLs Zoho's docs write. A change of a manifest's base or rule cannot silently move a data centre.
 * - accounts servers: https://www.zoho.com/accounts/protocol/oauth/multi-dc.html (Canada: accounts.zohocloud.ca)
 * - token request at the accounts server: https://www.zoho.com/accounts/protocol/oauth/multi-dc/client-authorization.html
 * - www.zohoapis.ca for Canada: https://www.bigin.com/developer/docs/apis/multi-dc.html
 * - Sign on sign.zohocloud.ca for Canada: https://www.zoho.com/sign/api/api-endpoint.html
 * - the UK's accounts server, accounts.zoho.uk: https://www.zoho.com/accounts/protocol/oauth/multi-dc.html (no Zoho page
 *   found names the UK's API domain or product hosts)
 * - `Authorization: Zoho-oauthtoken <token>` where each product's docs write it (the pages are cited in the manifests);
 *   Zoho Accounts takes Bearer too (https://www.zoho.com/accounts/protocol/oauth/use-access-token.html)
 */
import { valuesFromAnswers } from '../../src/auth/provider-answers.js';
import { checkConnectionConfig, fillProviderUrl } from '../../src/catalog/connection-config.js';
import { ZOHO_DATA_CENTRES, zohoDataCentreConfig } from '../../src/migrations/zoho-data-centre.js';
import { readCatalog } from '../support/catalog-files.js';

const zoho = readCatalog().filter((m) => m.metadata.name === 'zoho' || m.metadata.name.startsWith('zoho-'));

/** The configuration a connection gets from Zoho's answers, checked by the keys' rules; typed keys given. */
function connect(name: string, accountsServer: string, apiDomain: string): Record<string, unknown> {
  const spec = zoho.find((m) => m.metadata.name === name)!.spec;
  const typed = { organizationId: '10234695', orgId: '1234' };
  const values = valuesFromAnswers(
    spec,
    {
      callbackQuery: new URLSearchParams({ location: 'x', 'accounts-server': accountsServer }),
      tokenAnswer: { access_token: 'a', api_domain: apiDomain },
    },
    {},
  );
  const declared = new Set((spec.connectionConfiguration ?? []).map((f) => (typeof f === 'string' ? f : f.name)));
  const config = { ...values, ...Object.fromEntries(Object.entries(typed).filter(([k]) => declared.has(k))) };
  return checkConnectionConfig(spec, config, {});
}

function urls(name: string, accountsServer: string, apiDomain: string): { token: string; api: string } {
  const spec = zoho.find((m) => m.metadata.name === name)!.spec;
  const config = connect(name, accountsServer, apiDomain);
  return { token: fillProviderUrl(spec, spec.tokenUrl!, config), api: fillProviderUrl(spec, spec.proxy!.baseUrl!, config) };
}

const CA = ['https://accounts.zohocloud.ca', 'https://www.zohoapis.ca'] as const;
const EU = ['https://accounts.zoho.eu', 'https://www.zohoapis.eu'] as const;

describe("the Zoho Providers' data centres", () => {
  it('ships the thirteen, none asking the end user for the data centre', () => {
    expect(zoho.map((m) => m.metadata.name).sort()).toHaveLength(13);
    for (const m of zoho) {
      const dataCentre = (m.spec.connectionConfiguration ?? []).filter(
        (f) => typeof f !== 'string' && ['accountsServer', 'apiDomain', 'zohoDomain'].includes(f.name),
      );
      expect([m.metadata.name, dataCentre.every((f) => typeof f !== 'string' && f.from !== undefined)]).toEqual([m.metadata.name, true]);
      expect([m.metadata.name, m.spec.authorizationUrl]).toEqual([m.metadata.name, 'https://accounts.zoho.com/oauth/v2/auth']);
    }
  });

  it('sends every token request to the accounts server Zoho named: accounts.zohocloud.ca for Canada', () => {
    for (const m of zoho) {
      const spec = m.spec;
      expect([m.metadata.name, fillProviderUrl(spec, spec.tokenUrl!, { accountsServer: 'accounts.zohocloud.ca' })]).toEqual([
        m.metadata.name,
        'https://accounts.zohocloud.ca/oauth/v2/token',
      ]);
    }
    expect(urls('zoho-books', ...EU).token).toBe('https://accounts.zoho.eu/oauth/v2/token');
  });

  it('calls the API domain Zoho returns for the products on www.zohoapis.<domain>', () => {
    for (const name of ['zoho', 'zoho-crm', 'zoho-bigin', 'zoho-books', 'zoho-inventory', 'zoho-invoice']) {
      expect([name, urls(name, ...CA)]).toEqual([
        name,
        { token: 'https://accounts.zohocloud.ca/oauth/v2/token', api: 'https://www.zohoapis.ca' },
      ]);
      expect([name, urls(name, ...EU).api]).toEqual([name, 'https://www.zohoapis.eu']);
    }
  });

  it("calls Sign on sign.zohocloud.ca for Canada and sign.zoho.eu for the EU (Sign's API root endpoint page)", () => {
    expect(urls('zoho-sign', ...CA)).toEqual({ token: 'https://accounts.zohocloud.ca/oauth/v2/token', api: 'https://sign.zohocloud.ca' });
    expect(urls('zoho-sign', ...EU).api).toBe('https://sign.zoho.eu');
    // Sign's table lists no China: no host is made up for it.
    expect(() => connect('zoho-sign', 'https://accounts.zoho.com.cn', 'https://www.zohoapis.com.cn')).toThrow();
  });

  it("keeps the products on their own hosts at <product>.zoho.<domain>, and refuses Canada where the product's docs name no host", () => {
    const hosts: Record<string, string> = {
      'zoho-calendar': 'https://calendar.zoho.eu/api',
      'zoho-desk': 'https://desk.zoho.eu/api',
      'zoho-mail': 'https://mail.zoho.eu',
      'zoho-people': 'https://people.zoho.eu',
      'zoho-projects': 'https://projectsapi.zoho.eu',
      'zoho-recruit': 'https://recruit.zoho.eu/recruit',
    };
    for (const [name, api] of Object.entries(hosts)) {
      expect([name, urls(name, ...EU)]).toEqual([name, { token: 'https://accounts.zoho.eu/oauth/v2/token', api }]);
      expect(() => connect(name, ...CA)).toThrow(/zohoDomain/);
    }
  });

  it("sends a UK account's token request to accounts.zoho.uk, and refuses its API domain and product hosts, which no Zoho page names", () => {
    for (const m of zoho) {
      expect([m.metadata.name, fillProviderUrl(m.spec, m.spec.tokenUrl!, { accountsServer: 'accounts.zoho.uk' })]).toEqual([
        m.metadata.name,
        'https://accounts.zoho.uk/oauth/v2/token',
      ]);
      // The accounts server alone is accepted; the next value the connection needs is refused by name.
      expect(() => connect(m.metadata.name, 'https://accounts.zoho.uk', 'https://www.zohoapis.uk')).toThrow(/apiDomain|zohoDomain/);
      expect(() => connect(m.metadata.name, 'https://accounts.zoho.uk.evil.example', 'https://www.zohoapis.eu')).toThrow(/accountsServer/);
    }
  });

  it("sends Zoho-oauthtoken where the product's docs write it, Bearer (the default) for Calendar and the generic Zoho Provider", () => {
    const scheme = Object.fromEntries(zoho.map((m) => [m.metadata.name, m.spec.proxy?.headers?.authorization ?? 'Bearer (default)']));
    const zohoToken = 'Zoho-oauthtoken ${accessToken}';
    expect(scheme).toEqual({
      zoho: 'Bearer (default)',
      'zoho-bigin': zohoToken,
      'zoho-books': zohoToken,
      'zoho-calendar': 'Bearer (default)',
      'zoho-crm': zohoToken,
      'zoho-desk': zohoToken,
      'zoho-inventory': zohoToken,
      'zoho-invoice': zohoToken,
      'zoho-mail': zohoToken,
      'zoho-people': zohoToken,
      'zoho-projects': zohoToken,
      'zoho-recruit': zohoToken,
      'zoho-sign': zohoToken,
    });
  });

  it('refuses an accounts server or API domain outside Zoho before anything is sent there', () => {
    for (const m of zoho) {
      expect(() => connect(m.metadata.name, 'https://accounts.zoho.eu.evil.example', 'https://www.zohoapis.eu')).toThrow();
    }
    expect(() => connect('zoho-books', 'https://accounts.zoho.eu', 'https://www.zohoapis.evil.example')).toThrow();
  });

  it('migrates a connection stored with a typed domain extension to values each manifest accepts (latchkey migrate zoho-data-centre)', () => {
    for (const m of zoho.filter((x) => x.metadata.name !== 'zoho')) {
      for (const ext of Object.keys(ZOHO_DATA_CENTRES)) {
        const migrated = zohoDataCentreConfig({ domainExtension: ext, organizationId: '1', orgId: '1' }, m.metadata.name);
        if (!migrated) continue; // listed for a reconnect: the product documents no host there
        const config = checkConnectionConfig(m.spec, migrated, {});
        expect([m.metadata.name, ext, fillProviderUrl(m.spec, m.spec.tokenUrl!, config)]).toEqual([
          m.metadata.name,
          ext,
          `https://${ZOHO_DATA_CENTRES[ext]!.accountsServer}/oauth/v2/token`,
        ]);
      }
    }
    expect(zohoDataCentreConfig({ domainExtension: 'ca' }, 'zoho-desk')).toBeUndefined();
  });
});
