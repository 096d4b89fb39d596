/**
 * The hosts each shipped Provider may send requests (or the browser) to: every URL of a manifest is on
 * the registrable domain of its `docs` page or of its `proxy.baseUrl`, or on a host listed here with the
 * reason (the provider's docs name it). The catalog test (catalog.unit.test.ts) checks it.
 */

/** Public suffixes of two labels that appear in the catalog's hosts (the registrable domain is one label more). */
export const TWO_LABEL_SUFFIXES = new Set(['co.uk', 'com.au', 'co.jp', 'com.br', 'co.nz', 'co.in', 'com.cn']);

/** The registrable domain of a host name (`api.eu.example.co.uk` -> `example.co.uk`). */
export function registrableDomain(host: string): string {
  const labels = host.toLowerCase().replace(/\.$/, '').split('.');
  const lastTwo = labels.slice(-2).join('.');
  return labels.slice(TWO_LABEL_SUFFIXES.has(lastTwo) ? -3 : -2).join('.');
}

/**
 * Registrable domains a whole vendor family signs in on: allowed for every manifest whose own domains
 * include the family's (Microsoft's identity platform, login.microsoftonline.com, for every Microsoft API).
 */
export const FAMILY_DOMAINS: Record<string, { domains: string[]; why: string }> = {
  'microsoft.com': {
    domains: ['microsoftonline.com'],
    why: 'the Microsoft identity platform (login.microsoftonline.com) issues tokens for every Microsoft API',
  },
  'zoho.com': {
    domains: ['zohoapis.com'],
    why: "Zoho's APIs are on www.zohoapis.<data center's domain>, its sign-in on accounts.zoho.<domain>",
  },
};

/** Registrable domains on another domain than the docs and the API, per provider, with what they are. */
export const EXTRA_DOMAINS: Record<string, { domains: string[]; why: string }> = {
  'adobe-umapi': { domains: ['adobelogin.com'], why: 'Adobe IMS (ims-na1.adobelogin.com) issues the tokens for Adobe APIs' },
  'adobe-workfront': { domains: ['workfront.com'], why: 'Workfront instances are <name>.my.workfront.com (or .my.workfront.adobe.com)' },
  aws: { domains: ['amazoncognito.com'], why: "a Cognito user pool's hosted OAuth endpoints are <prefix>.auth.<region>.amazoncognito.com" },
  'checkr-partner-staging': {
    domains: ['checkrhq-staging.net'],
    why: "Checkr's staging partner sign-up page is partners.checkrhq-staging.net",
  },
  conductorone: { domains: ['conductor.one'], why: 'ConductorOne tenants are <tenant>.conductor.one' },
  'databricks-workspace': { domains: ['azuredatabricks.net'], why: 'Azure Databricks workspaces are adb-<id>.<n>.azuredatabricks.net' },
  'datadog-basic': { domains: ['ddog-gov.com'], why: "Datadog's US1-FED site (ddog-gov.com), one of the sites the site key lists" },
  'datadog-oauth': { domains: ['ddog-gov.com'], why: "Datadog's US1-FED site (ddog-gov.com), one of the sites the site key lists" },
  dayforce: { domains: ['dayforcehcm.com'], why: "Dayforce's API (www.dayforcehcm.com) and identity (dfid.dayforcehcm.com) hosts" },
  docusign: { domains: ['docusign.net'], why: "the account's API host (base_uri from /oauth/userinfo) is under docusign.net" },
  'figma-scim': {
    domains: ['figma-gov.com'],
    why: 'Figma for Government organisations are on figma-gov.com (the common catalog lists it beside www.figma.com)',
  },
  freshworks: {
    domains: ['myfreshworks.com', 'freshdesk.com', 'freshservice.com'],
    why: "Freshworks organisations sign in on <org>.myfreshworks.com; product accounts are on the products' domains",
  },
  'goto-meeting': { domains: ['logmeininc.com'], why: "GoTo's sign-in service is authentication.logmeininc.com" },
  highlevel: { domains: ['gohighlevel.com'], why: "HighLevel's authorize page (location chooser) is on marketplace.gohighlevel.com" },
  lattice: { domains: ['latticehq.com'], why: "Lattice's API hosts are api.latticehq.com and api.emea.latticehq.com" },
  'lever-sandbox': { domains: ['auth0.com'], why: "Lever's sandbox sign-in runs on sandbox-lever.auth0.com" },
  lucid: { domains: ['lucid.app'], why: "Lucid's authorize page is on lucid.app, its API on api.lucid.co" },
  mastodon: {
    domains: ['mastodon.social'],
    why: 'the default Mastodon instance (the docs use it in examples); other instances are configuration',
  },
  'okta-api-key': { domains: ['oktapreview.com', 'okta-emea.com'], why: "Okta's preview and EMEA cells serve orgs under these domains" },
  'polar-accesslink': { domains: ['polarremote.com'], why: "Polar's token endpoint is polarremote.com" },
  'sage-accounting': { domains: ['sageone.com'], why: "Sage Accounting's authorize page is on www.sageone.com" },
  'zoho-bigin': {
    domains: ['zoho.com', 'zohoapis.com'],
    why: 'Bigin is a Zoho product: Zoho accounts sign in, the API is on www.zohoapis.<domain>',
  },
  jira: { domains: ['jira.com'], why: "older Atlassian Cloud sites are on jira.com (accessible-resources answers a site's url)" },
  confluence: { domains: ['jira.com'], why: "older Atlassian Cloud sites are on jira.com (accessible-resources answers a site's url)" },
  'zoho-crm': {
    domains: ['zohocloud.ca'],
    why: "Zoho's Canada data centre signs in on accounts.zohocloud.ca (the accounts-server the redirect names)",
  },
  smartsheet: {
    domains: ['smartsheetgov.com', 'smartsheet.eu', 'smartsheet.au'],
    why: 'Smartsheet Gov, Regions Europe and Regions Australia (https://developers.smartsheet.com/api/smartsheet/guides/basics/base-url)',
  },
  typeform: {
    domains: ['typeform.eu'],
    why: 'the EU data center host api.typeform.eu (https://www.typeform.com/developers/get-started/mcp/)',
  },
};
