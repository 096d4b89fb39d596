/**
 * The hosts each shipped Provider may send requests (or the browser) to: every URL of a manifest is on
 * the registrable domain of its `docs` page or of its `proxy.baseUrl`, or on a host listed here with the
 * reason (the provider's docs name it). The catalog test (catalog.unit.test.ts) checks it.
 */

export { TWO_LABEL_SUFFIXES, registrableDomain } from '../../dev/field-help.js';

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
    domains: ['zohoapis.com', 'zohocloud.ca'],
    why: "Zoho's APIs are on www.zohoapis.<data center's domain>, its sign-in on accounts.zoho.<domain>; Canada's accounts server and product hosts are on zohocloud.ca (https://www.zoho.com/accounts/protocol/oauth/multi-dc.html)",
  },
};

/** Registrable domains on another domain than the docs and the API, per provider, with what they are. */
export const EXTRA_DOMAINS: Record<string, { domains: string[]; why: string }> = {
  'adobe-umapi': { domains: ['adobelogin.com'], why: 'Adobe IMS (ims-na1.adobelogin.com) issues the tokens for Adobe APIs' },
  'adobe-workfront': { domains: ['workfront.com'], why: 'Workfront instances are <name>.my.workfront.com (or .my.workfront.adobe.com)' },
  'amazon-selling-partner': {
    domains: ['vendorcentral.in'],
    why: "India's Vendor Central is www.vendorcentral.in (the Selling Partner API Developer Guide's Vendor Central URLs)",
  },
  'amazon-selling-partner-beta': {
    domains: ['vendorcentral.in'],
    why: "India's Vendor Central is www.vendorcentral.in (the Selling Partner API Developer Guide's Vendor Central URLs)",
  },
  bullhorn: {
    domains: ['bullhornstaffing.com'],
    why: 'the docs are on bullhorn.github.io; the OAuth and REST hosts of each data centre on bullhornstaffing.com (https://bullhorn.github.io/Data-Center-URLs/)',
  },
  aws: { domains: ['amazoncognito.com'], why: "a Cognito user pool's hosted OAuth endpoints are <prefix>.auth.<region>.amazoncognito.com" },
  'checkr-partner-staging': {
    domains: ['checkrhq-staging.net'],
    why: "Checkr's staging partner sign-up page is partners.checkrhq-staging.net",
  },
  conductorone: { domains: ['conductor.one'], why: 'ConductorOne tenants are <tenant>.conductor.one' },
  'databricks-workspace': { domains: ['azuredatabricks.net'], why: 'Azure Databricks workspaces are adb-<id>.<n>.azuredatabricks.net' },
  datadog: { domains: ['ddog-gov.com'], why: "Datadog's US1-FED site (ddog-gov.com), one of the sites the site key lists" },
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
  'sap-success-factors': {
    domains: ['successfactors.com', 'sapsf.com'],
    why: "SuccessFactors' API servers are api<N>.successfactors.com and api<N>.sapsf.com (SAP's KBAs 2668018 and 3462403); SAP's own pages are on sap.com",
  },
  'okta-api-key': { domains: ['oktapreview.com', 'okta-emea.com'], why: "Okta's preview and EMEA cells serve orgs under these domains" },
  'polar-accesslink': { domains: ['polarremote.com'], why: "Polar's token endpoint is polarremote.com" },
  'sage-accounting': { domains: ['sageone.com'], why: "Sage Accounting's authorize page is on www.sageone.com" },
  segment: { domains: ['segmentapis.com'], why: "Segment's OAuth server is id.segmentapis.com (the Public API's domain)" },
  snowflake: {
    domains: ['snowflakecomputing.com'],
    why: "a Snowflake account's own host (<org>-<account>.snowflakecomputing.com) serves its OAuth endpoints and APIs",
  },
  'zoho-bigin': {
    domains: ['zoho.com', 'zohoapis.com', 'zohocloud.ca'],
    why: "Bigin is a Zoho product: Zoho accounts sign in (Canada's on accounts.zohocloud.ca), the API is on www.zohoapis.<domain>",
  },
  jira: { domains: ['jira.com'], why: "older Atlassian Cloud sites are on jira.com (accessible-resources answers a site's url)" },
  confluence: { domains: ['jira.com'], why: "older Atlassian Cloud sites are on jira.com (accessible-resources answers a site's url)" },
  smartsheet: {
    domains: ['smartsheetgov.com', 'smartsheet.eu', 'smartsheet.au'],
    why: 'Smartsheet Gov, Regions Europe and Regions Australia (https://developers.smartsheet.com/api/smartsheet/guides/basics/base-url)',
  },
  typeform: {
    domains: ['typeform.eu'],
    why: 'the EU data center host api.typeform.eu (https://www.typeform.com/developers/get-started/mcp/)',
  },
  'mercado-libre': {
    domains: ['mercadolivre.com.br'],
    why: "Mercado Livre (Brazil) signs in on auth.mercadolivre.com.br, one of the country authorization hosts the docs' authentication page lists",
  },
  'microsoft-dataverse': {
    domains: ['dynamics.com'],
    why: 'each Dataverse environment is its own host under dynamics.com (https://yourorg.api.crm.dynamics.com/api/data/v9.2 in the Web API docs)',
  },
  'microsoft-dynamics-365-finance-and-operations': {
    domains: ['dynamics.com'],
    why: "each Finance and Operations environment is its own host under dynamics.com (the services overview's base URLs)",
  },
  'microsoft-dynamics-365-finance-and-operations-cc': {
    domains: ['dynamics.com'],
    why: "each Finance and Operations environment is its own host under dynamics.com (the services overview's base URLs)",
  },
  odoo: {
    domains: ['odoo.com'],
    why: "the REST API module runs on the customer's Odoo.sh database under odoo.com; the module's docs are on readthedocs.io",
  },
  'odoo-cc': {
    domains: ['odoo.com'],
    why: "the REST API module runs on the customer's Odoo.sh database under odoo.com; the module's docs are on readthedocs.io",
  },
  'oracle-hcm': {
    domains: ['oraclecloud.com'],
    why: "the REST server is the customer's Fusion Cloud host (servername.fa.us2.oraclecloud.com in the Quick Start)",
  },
  perimeter81: {
    domains: ['checkpoint.com'],
    why: 'Perimeter 81 is now Check Point Harmony SASE: its EU authentication host is api.eu.sase.checkpoint.com',
  },
  pingone: {
    domains: ['pingone.com', 'pingone.ca', 'pingone.eu', 'pingone.com.au', 'pingone.sg', 'pingone.asia'],
    why: "PingOne's regional sign-in and API hosts (auth.pingone.<tld>, api.pingone.<tld>); the docs are on pingidentity.com",
  },
  'pingone-cc': {
    domains: ['pingone.com', 'pingone.ca', 'pingone.eu', 'pingone.com.au', 'pingone.sg', 'pingone.asia'],
    why: "PingOne's regional sign-in and API hosts (auth.pingone.<tld>, api.pingone.<tld>); the docs are on pingidentity.com",
  },
  rydership: {
    domains: ['getwhiplash.com'],
    why: "RyderShip's (formerly Whiplash) production host is www.getwhiplash.com; its help center is on whiplash.com",
  },
  'servicenow-oauth2-cc': {
    domains: ['service-now.com'],
    why: 'each ServiceNow instance is <instance>.service-now.com; the docs are on servicenow.com',
  },
  stackexchange: {
    domains: ['stackoverflow.com'],
    why: "Stack Exchange's OAuth dialog and token endpoint are on stackoverflow.com (api.stackexchange.com/docs/authentication)",
  },
  'ukg-pro': {
    domains: ['ultipro.com', 'ultipro.ca'],
    why: "UKG Pro tenants' service hosts are under ultipro.com (US) and ultipro.ca (Canada)",
  },
  'ukg-pro-cc': {
    domains: ['ultipro.com', 'ultipro.ca'],
    why: "UKG Pro tenants' service hosts are under ultipro.com (US) and ultipro.ca (Canada)",
  },
  'ukg-ready': {
    domains: ['rdy.ukg'],
    why: "UKG Ready's service hosts are under rdy.ukg (secure.us.rdy.ukg); its API docs are still on saashr.com",
  },
  vanta: {
    domains: ['vanta-gov.com'],
    why: "Vanta Government Cloud's API host api.vanta-gov.com (https://developer.vanta.com/reference/overview)",
  },
  workday: { domains: ['myworkday.com'], why: 'Workday tenants are served from hosts under workday.com and myworkday.com' },
  'workday-oauth': { domains: ['myworkday.com'], why: 'Workday tenants are served from hosts under workday.com and myworkday.com' },
  yahoo: {
    domains: ['yahooapis.com'],
    why: "Yahoo's APIs are on yahooapis.com (fantasysports.yahooapis.com), its sign-in on api.login.yahoo.com",
  },
};
