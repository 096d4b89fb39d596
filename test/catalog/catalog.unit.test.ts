/**
 * Offline checks of the shipped provider catalog (config/providers): everything that can be checked
 * without calling the providers. This test is the source of truth for the catalog conventions
 * described in config/providers/README.md.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAllYaml } from '@kubernetes/client-node';
import { AUTH_MODES, MODES_WITHOUT_INTEGRATION_SECRET } from '../../src/domain/auth-modes.js';
import {
  configFieldNames,
  configFields,
  pathKeys,
  templateHost,
  undeclaredHost,
  urlPathProblems,
  urlTemplates,
} from '../../src/catalog/connection-config.js';
import { proxyTemplates } from '../../src/catalog/credential-templates.js';
import { CATALOG_DIR, CRD_PATH, catalogFileNames, readCatalogFiles, type ProviderManifest } from '../support/catalog-files.js';
import { BASE_PATH_EXCEPTIONS, COMMON_BASE_PATHS, PENDING_ELSEWHERE } from './proxy-base-paths.js';
import { EXTRA_DOMAINS, FAMILY_DOMAINS, registrableDomain } from './provider-hosts.js';

type Schema = {
  type?: string;
  enum?: unknown[];
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  items?: Schema;
  required?: string[];
  properties?: Record<string, Schema>;
  additionalProperties?: Schema;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
};

const crd = loadAllYaml(readFileSync(CRD_PATH, 'utf8'))[0] as {
  spec: { versions: Array<{ storage: boolean; schema: { openAPIV3Schema: Schema } }> };
};
const rootSchema = crd.spec.versions.find((v) => v.storage)!.schema.openAPIV3Schema;

const files = readCatalogFiles();
const manifests = new Map<string, ProviderManifest>();
for (const f of files) if (f.docs.length === 1) manifests.set(f.file, f.docs[0] as ProviderManifest);
const entries = [...manifests.entries()];

const URL_FIELDS = ['authorizationUrl', 'tokenUrl', 'refreshUrl', 'requestTokenUrl'] as const;
const VALUE_PLACEHOLDERS = new Set(['apiKey', 'username', 'password', 'accessToken', 'sessionToken', 'clientId', 'clientSecret']);
const CONFIG_PLACEHOLDER = /^connectionConfig\.([A-Za-z][A-Za-z0-9_]*)$/;
const NAME_RE = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
/** What a field label must not say: where in the provider's answers a value is (the Provider's `from` fills those). */
const LOOKUP_WORDING =
  /token (response|answer)|returned (on|by|in|from)|\bfrom (GET |https?:\/\/|\/)|\bGET (https?:\/\/|\/)|field of (the |https?:\/\/)|\/oauth\/|userinfo|accessible-resources|\bapi_domain\b|\binstance_url\b/i;
const FIELD_LABEL_KEYS = new Set([
  'apiKey',
  'username',
  'password',
  'clientId',
  'clientSecret',
  // TBA, BILL and APP_STORE credential fields (src/connect/flows.ts).
  'tokenId',
  'tokenSecret',
  'organization_id',
  'dev_key',
  'issuer_id',
  'key_id',
  'private_key',
]);
const MODES_WITH_PROXY = new Set([
  'OAUTH2',
  'OAUTH1',
  'OAUTH2_CC',
  'APP',
  'API_KEY',
  'BASIC',
  'JWT',
  'TWO_STEP',
  'BILL',
  'APP_STORE',
  'INSTALL_PLUGIN',
]);

function placeholders(s: string): string[] {
  return [...s.matchAll(/\$\{([^}]*)\}/g)].map((m) => m[1]!);
}

/** Runs `check` on every manifest and returns the problems as "file: message" lines. */
function problems(check: (m: ProviderManifest, report: (msg: string) => void, file: string) => void): string[] {
  const out: string[] = [];
  for (const [file, m] of entries) check(m, (msg) => out.push(`${file}: ${msg}`), file);
  return out;
}

/** Structural validation against the CRD's own openAPIV3Schema (types, unknown fields, enums, lengths, patterns). */
function validateSchema(value: unknown, schema: Schema | undefined, path: string, report: (m: string) => void): void {
  if (value === undefined || value === null || !schema) return;
  const t = schema.type;
  const actual = Array.isArray(value) ? 'array' : typeof value === 'number' && Number.isInteger(value) ? 'integer' : typeof value;
  if (t && !(t === actual || (t === 'number' && actual === 'integer'))) {
    report(`${path}: expected ${t}, got ${actual}`);
    return;
  }
  if (schema.enum && !schema.enum.includes(value)) report(`${path}: ${JSON.stringify(value)} is not one of ${schema.enum.join(', ')}`);
  if (typeof value === 'string') {
    if (schema.maxLength !== undefined && value.length > schema.maxLength) report(`${path}: longer than ${schema.maxLength}`);
    if (schema.minLength !== undefined && value.length < schema.minLength) report(`${path}: shorter than ${schema.minLength}`);
    if (schema.pattern && !new RegExp(schema.pattern).test(value)) report(`${path}: does not match ${schema.pattern}`);
  }
  if (Array.isArray(value)) {
    if (schema.maxItems !== undefined && value.length > schema.maxItems) report(`${path}: more than ${schema.maxItems} items`);
    value.forEach((v, i) => validateSchema(v, schema.items, `${path}[${i}]`, report));
  }
  if (actual === 'object' && t === 'object') {
    const obj = value as Record<string, unknown>;
    for (const r of schema.required ?? []) if (!(r in obj)) report(`${path}: missing required field ${r}`);
    if (schema['x-kubernetes-preserve-unknown-fields']) return;
    for (const [k, v] of Object.entries(obj)) {
      if (schema.properties?.[k]) validateSchema(v, schema.properties[k], `${path}.${k}`, report);
      else if (schema.additionalProperties) validateSchema(v, schema.additionalProperties, `${path}.${k}`, report);
      else if (schema.properties) report(`${path}: unknown field ${k} (the API server would prune it)`);
    }
  }
}

/** Every string in the spec that may carry placeholders, with where it is. */
function templatedStrings(spec: ProviderManifest['spec']): Array<{ where: string; value: string; valuePlaceholders: boolean }> {
  const out: Array<{ where: string; value: string; valuePlaceholders: boolean }> = [];
  for (const f of URL_FIELDS) if (typeof spec[f] === 'string') out.push({ where: f, value: spec[f]!, valuePlaceholders: false });
  if (typeof spec.proxy?.baseUrl === 'string') out.push({ where: 'proxy.baseUrl', value: spec.proxy.baseUrl, valuePlaceholders: false });
  for (const where of ['headers', 'query'] as const) {
    for (const [k, v] of Object.entries(spec.proxy?.[where] ?? {}))
      out.push({ where: `proxy.${where}.${k}`, value: String(v), valuePlaceholders: true });
  }
  for (const where of ['authorizationParams', 'tokenParams'] as const) {
    for (const [k, v] of Object.entries(spec[where] ?? {}))
      out.push({ where: `${where}.${k}`, value: String(v), valuePlaceholders: false });
  }
  const walk = (v: unknown, path: string) => {
    if (typeof v === 'string') out.push({ where: path, value: v, valuePlaceholders: false });
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`);
  };
  walk(spec.modeOptions, 'modeOptions');
  // TWO_STEP: the token exchange's URL, headers and body (whose ${credentials.X} are the stored fields).
  walk((spec as { twoStep?: unknown }).twoStep, 'twoStep');
  // Post-connection steps' URLs (whose ${accessToken} goes in the query: Bullhorn's login).
  for (const step of spec.postConnection?.steps ?? [])
    out.push({ where: `postConnection.steps.${step.name}.url`, value: step.url, valuePlaceholders: false });
  return out;
}

/**
 * The literal host a URL reaches: its host after the last placeholder (`${x}.zendesk.com` -> `zendesk.com`),
 * or undefined when a placeholder is the whole host (its rule is checked apart) or it is no URL.
 */
function literalHost(url: string | undefined): string | undefined {
  const host = /^https?:\/\/([^/?#]*)/.exec(url ?? '')?.[1]?.replace(/:[0-9]+$/, '');
  if (!host) return undefined;
  const rest = host.slice(host.lastIndexOf('}') + 1).replace(/^\./, '');
  return rest.includes('.') ? rest : undefined;
}

/** A base URL's path with each `${...}` written `*` and no trailing slash ('' for a host alone). */
function basePath(url: string): string {
  return (/^https:\/\/[^/]+(\/.*)?$/.exec(url)?.[1] ?? '').replace(/\$\{[^}]*\}/g, '*').replace(/\/+$/, '');
}

/** The URL with every placeholder replaced by a plausible host label, so it can be parsed. */
function filled(url: string): string {
  return url.replace(/\$\{[^}]*\}/g, 'acme');
}

describe('provider catalog (offline)', () => {
  it('has at least 400 providers', () => {
    expect(files.length).toBeGreaterThanOrEqual(400);
  });

  it('is one Provider document per file, named like the file, without tabs', () => {
    const out: string[] = [];
    for (const f of files) {
      if (f.text.includes('\t')) out.push(`${f.file}: contains a tab`);
      if (f.docs.length !== 1) {
        out.push(`${f.file}: expected one YAML document, got ${f.docs.length}`);
        continue;
      }
      const m = f.docs[0] as ProviderManifest;
      if (m.apiVersion !== 'latchkey.dev/v1alpha1') out.push(`${f.file}: apiVersion is ${m.apiVersion}`);
      if (m.kind !== 'Provider') out.push(`${f.file}: kind is ${m.kind}`);
      if (`${m.metadata?.name}.yaml` !== f.file) out.push(`${f.file}: metadata.name ${m.metadata?.name} does not match the file name`);
      if (!NAME_RE.test(m.metadata?.name ?? '')) out.push(`${f.file}: name is not lowercase kebab-case`);
      if (m.metadata?.namespace) out.push(`${f.file}: Provider is cluster-scoped; no namespace`);
      for (const k of Object.keys(m))
        if (!['apiVersion', 'kind', 'metadata', 'spec'].includes(k)) out.push(`${f.file}: unexpected top-level key ${k}`);
    }
    expect(out).toEqual([]);
  });

  it('has no duplicate provider names (case-insensitively) or display names', () => {
    const names = entries.map(([, m]) => m.metadata.name.toLowerCase());
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
    const display = entries.map(([, m]) => m.spec.displayName.trim().toLowerCase());
    expect(display.filter((n, i) => display.indexOf(n) !== i)).toEqual([]);
  });

  it('keeps every alias unique across the catalog: no alias is a provider name or another alias, and each is a provider name in shape', () => {
    const names = new Set(entries.map(([, m]) => m.metadata.name));
    const claimed = new Map<string, string>();
    expect(
      problems((m, report) => {
        for (const alias of m.spec.aliases ?? []) {
          if (!NAME_RE.test(alias)) report(`alias ${alias} is not lowercase kebab-case`);
          if (names.has(alias)) report(`alias ${alias} is the name of a provider`);
          const other = claimed.get(alias);
          if (other) report(`alias ${alias} is also an alias of ${other}`);
          claimed.set(alias, m.metadata.name);
        }
      }),
    ).toEqual([]);
    expect(claimed.size).toBeGreaterThan(0);
  });

  it('matches the CRD schema (types, enums, lengths, patterns, no unknown fields)', () => {
    expect(problems((m, report) => validateSchema(m, rootSchema, '', (msg) => report(`schema${msg}`)))).toEqual([]);
  });

  it('satisfies the CRD validation rules for each auth mode', () => {
    expect(
      problems((m, report) => {
        const s = m.spec;
        if (!AUTH_MODES.includes(s.authMode)) report(`authMode ${s.authMode} is not a known mode`);
        if ((s.authMode === 'OAUTH2' || s.authMode === 'OAUTH1') && !(s.authorizationUrl && s.tokenUrl))
          report(`${s.authMode} needs authorizationUrl and tokenUrl`);
        if ((s.authMode === 'OAUTH2_CC' || s.authMode === 'APP') && !s.tokenUrl) report(`${s.authMode} needs tokenUrl`);
        if (s.authMode === 'OAUTH1' && !s.requestTokenUrl) report('OAUTH1 needs requestTokenUrl');
        if (s.tokenRequestAuthMethod && !['basic', 'body', 'private_key_jwt', 'tls_client_auth', 'none'].includes(s.tokenRequestAuthMethod))
          report('tokenRequestAuthMethod must be basic, body, private_key_jwt, tls_client_auth or none');
        if (s.tokenRequestBodyFormat && !['form', 'json', 'query'].includes(s.tokenRequestBodyFormat))
          report('tokenRequestBodyFormat must be form, json or query');
      }),
    ).toEqual([]);
  });

  it('uses https for every URL, and each URL parses once its placeholders are filled', () => {
    expect(
      problems((m, report) => {
        const urls: Array<[string, string | undefined]> = [
          ...URL_FIELDS.map((f) => [f, m.spec[f]] as [string, string | undefined]),
          ['proxy.baseUrl', m.spec.proxy?.baseUrl],
          ['docs', m.spec.docs],
        ];
        for (const [field, value] of urls) {
          if (value === undefined) continue;
          if (!value.startsWith('https://')) {
            report(`${field} is not https: ${value}`);
            continue;
          }
          try {
            const u = new URL(filled(value));
            if (u.username || u.password) report(`${field} carries user info`);
            if (u.hash && field !== 'docs') report(`${field} has a fragment`);
          } catch {
            report(`${field} is not a URL: ${value}`);
          }
        }
        if (m.spec.docs && placeholders(m.spec.docs).length) report('docs must not contain placeholders');
      }),
    ).toEqual([]);
  });

  it('gives the proxy a plain base URL (no query, no trailing slash) for every mode that proxies', () => {
    expect(
      problems((m, report) => {
        const base = m.spec.proxy?.baseUrl;
        if (MODES_WITH_PROXY.has(m.spec.authMode) && !base) report('no proxy.baseUrl');
        if (!base) return;
        if (base.endsWith('/')) report('proxy.baseUrl ends with a slash');
        if (base.includes('?')) report('proxy.baseUrl has a query; use proxy.query');
        const u = new URL(filled(base));
        if (!/^[a-z0-9.-]+$/i.test(u.hostname)) report(`proxy.baseUrl host ${u.hostname} is not a plain host name`);
      }),
    ).toEqual([]);
  });

  it("writes proxy.baseUrl as the API root the docs write request paths from (the common catalog's base path where it has the name)", () => {
    expect(
      problems((m, report) => {
        const name = m.metadata.name;
        const base = m.spec.proxy?.baseUrl;
        if (!base || PENDING_ELSEWHERE[name] === base || name in BASE_PATH_EXCEPTIONS) return;
        const path = basePath(base);
        const common = COMMON_BASE_PATHS[name];
        if (common !== undefined) {
          if (path !== common) report(`proxy.baseUrl path ${path || '(none)'} is not the common catalog's ${common || '(none)'}`);
          return;
        }
        const segments = path.split('/').filter(Boolean);
        const afterAccount = segments.slice(segments.lastIndexOf('*') + 1);
        if (afterAccount.length) report(`proxy.baseUrl ends in /${afterAccount.join('/')}: the docs' request paths carry it`);
      }),
    ).toEqual([]);
    for (const name of Object.keys(BASE_PATH_EXCEPTIONS)) expect([name, manifests.has(`${name}.yaml`)]).toEqual([name, true]);
  });

  // fieldHelp's docsUrl (a link, not a request) has its own rule: field-help.unit.test.ts.
  it("keeps every URL on the provider's own domains: its docs' and API's, or one listed with its reason", () => {
    expect(
      problems((m, report) => {
        const s = m.spec;
        const own = new Set([literalHost(s.docs), literalHost(s.proxy?.baseUrl)].filter((h): h is string => !!h).map(registrableDomain));
        for (const d of [...own]) for (const extra of FAMILY_DOMAINS[d]?.domains ?? []) own.add(extra);
        for (const extra of EXTRA_DOMAINS[m.metadata.name]?.domains ?? []) own.add(extra);
        const urls: Array<[string, string | undefined]> = [
          ...URL_FIELDS.map((f) => [f, s[f]] as [string, string | undefined]),
          ['proxy.baseUrl', s.proxy?.baseUrl],
          ['logoUrl', s.logoUrl],
          ['twoStep.tokenUrl', typeof s.twoStep?.tokenUrl === 'string' ? s.twoStep.tokenUrl : undefined],
          ['pluginInstall.installUrl', s.pluginInstall?.installUrl],
          ['appInstallation.installationUrl', s.appInstallation?.installationUrl],
          ['appInstallation.userTokenUrl', s.appInstallation?.userTokenUrl],
          ['appInstallation.userInstallationsUrl', s.appInstallation?.userInstallationsUrl],
        ];
        for (const f of configFields(s)) {
          for (const suffix of f.hostSuffixes ?? []) urls.push([`connectionConfiguration.${f.name}.hostSuffixes`, `https://${suffix}`]);
          // Each enum value that fills a host (a region's host) makes a host the URL may reach.
          for (const { template } of urlTemplates(s)) {
            const host = templateHost(template)?.host;
            const key = `\${connectionConfig.${f.name}}`;
            if (!host?.includes(key)) continue;
            for (const value of f.enum ?? [])
              urls.push([
                `connectionConfiguration.${f.name}.enum`,
                `https://${host
                  .split(key)
                  .join(value)
                  .replace(/\$\{[^}]*\}/g, 'x')}`,
              ]);
          }
        }
        const brands = new Set([...own].map((d) => d.split('.')[0]));
        const reported = new Set<string>();
        for (const [field, url] of urls) {
          const host = literalHost(url);
          if (!host) continue;
          const domain = registrableDomain(host);
          // The same brand under another public suffix (datadoghq.eu, zoho.com.au) is the provider's too.
          if (!own.has(domain) && !brands.has(domain.split('.')[0]) && !reported.has(`${field} ${host}`)) {
            reported.add(`${field} ${host}`);
            report(`${field} is on ${host}, not on ${[...own].join(', ')}: list it in EXTRA_DOMAINS with why`);
          }
        }
      }),
    ).toEqual([]);
    for (const name of Object.keys(EXTRA_DOMAINS)) expect([name, manifests.has(`${name}.yaml`)]).toEqual([name, true]);
  });

  it('declares every ${connectionConfig.X} placeholder in connectionConfiguration, and uses every declared key', () => {
    expect(
      problems((m, report) => {
        const declared = new Set(configFieldNames(m.spec));
        const used = new Set<string>();
        for (const { where, value, valuePlaceholders } of templatedStrings(m.spec)) {
          for (const p of placeholders(value)) {
            const cfg = CONFIG_PLACEHOLDER.exec(p);
            if (cfg) used.add(cfg[1]!);
            else if (where.startsWith('twoStep.') && /^credentials\.[A-Za-z0-9_]+$/.test(p)) continue;
            else if (where.startsWith('postConnection.') && p === 'accessToken') continue;
            // A SAML bearer assertion names the connection's client ID (SuccessFactors' api_key attribute).
            else if (where.startsWith('modeOptions.samlBearer.') && p === 'clientId') continue;
            else if (!(valuePlaceholders && VALUE_PLACEHOLDERS.has(p))) report(`${where} uses unknown placeholder \${${p}}`);
          }
        }
        for (const u of used) if (!declared.has(u)) report(`\${connectionConfig.${u}} is used but not in connectionConfiguration`);
        // A value the provider returns is kept for the application (and webhooks' account match) even where no URL uses it.
        for (const f of configFields(m.spec)) if ((f as { from?: unknown }).from) used.add(f.name);
        if (m.spec.webhooks?.account?.connectionConfigKey) used.add(m.spec.webhooks.account.connectionConfigKey);
        for (const d of declared) if (!used.has(d)) report(`connection configuration key ${d} is declared but never used`);
        for (const k of Object.keys(m.spec.fieldLabels ?? {})) {
          if (!FIELD_LABEL_KEYS.has(k) && !declared.has(k))
            report(`fieldLabels.${k} is neither a credential field nor a configuration key`);
        }
      }),
    ).toEqual([]);
  });

  it('gives every configuration key used in a URL a rule, and keeps every templated host on declared hosts', () => {
    expect(
      problems((m, report) => {
        const fields = configFields(m.spec);
        for (const why of urlPathProblems(m.spec)) report(why);
        for (const { field, template } of urlTemplates(m.spec)) {
          const host = templateHost(template, pathKeys(fields));
          if (!host) continue;
          const why = undeclaredHost(host.host, fields);
          if (why) report(`${field}: ${why}`);
          for (const p of placeholders(template)) {
            const key = CONFIG_PLACEHOLDER.exec(p)?.[1];
            const f = key && fields.find((x) => x.name === key);
            if (f && !f.pattern && !f.enum && !f.hostSuffixes && !f.anyHost && !f.urlPath) report(`${field}: \${${p}} has no rule`);
          }
        }
        for (const f of fields) {
          if (f.anyHost && !MODES_WITHOUT_INTEGRATION_SECRET.includes(m.spec.authMode) && f.setBy !== 'integration')
            report(`${f.name}: anyHost in ${m.spec.authMode}, set by the end user`);
          if (f.pattern !== undefined) {
            try {
              new RegExp(f.pattern, 'u');
            } catch {
              report(`${f.name}: pattern does not compile`);
            }
          }
        }
      }),
    ).toEqual([]);
  });

  it('says where an API key goes for every API_KEY provider, and uses credential placeholders only in the mode that has them', () => {
    expect(
      problems((m, report) => {
        const values = proxyTemplates(m.spec.proxy);
        if (m.spec.authMode === 'API_KEY' && !values.some((v) => v.includes('${apiKey}'))) {
          report('API_KEY provider does not place ${apiKey} in proxy.headers, proxy.query or proxy.body');
        }
        for (const v of values) {
          if (v.includes('${apiKey}') && !['API_KEY', 'JWT', 'INSTALL_PLUGIN'].includes(m.spec.authMode))
            report(`\${apiKey} used by a ${m.spec.authMode} provider`);
          if ((v.includes('${username}') || v.includes('${password}')) && m.spec.authMode !== 'BASIC')
            report(`\${username}/\${password} used by a ${m.spec.authMode} provider`);
        }
        // Body fields go in a JSON object: only a POST checks credentials with them (the CRD says so too).
        if (m.spec.proxy?.body && m.spec.verification && m.spec.verification.method !== 'POST')
          report('proxy.body with a verification call that is not a POST');
        for (const k of Object.keys(m.spec.proxy?.headers ?? {})) {
          if (k !== k.toLowerCase()) report(`header ${k} is not lowercase`);
          if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(k)) report(`header ${k} is not a valid header name`);
          if (['host', 'content-length', 'transfer-encoding', 'connection'].includes(k)) report(`header ${k} cannot be set by a provider`);
        }
      }),
    ).toEqual([]);
  });

  it('TBA, SIGNATURE and NONE: shipped, each with its mode settings (tba only on TBA with the account ID declared; signature only on SIGNATURE)', () => {
    const modes = new Set(entries.map(([, m]) => m.spec.authMode));
    for (const mode of ['TBA', 'SIGNATURE', 'NONE']) expect([mode, modes.has(mode as never)]).toEqual([mode, true]);
    expect(
      problems((m, report) => {
        const spec = m.spec;
        if (spec.tba && spec.authMode !== 'TBA') report('tba on a provider that is not TBA');
        if (spec.signature && spec.authMode !== 'SIGNATURE') report('signature on a provider that is not SIGNATURE');
        if (spec.authMode === 'TBA') {
          const key = spec.tba?.accountIdKey ?? 'accountId';
          const names = (spec.connectionConfiguration ?? []).map((f) => (typeof f === 'string' ? f : f.name));
          if (!names.includes(key)) report(`TBA provider does not declare its account ID key ${key}`);
          if (!spec.proxy?.baseUrl?.includes(`\${connectionConfig.${key}}`)) report('TBA base URL does not use the account ID host');
        }
        if (spec.authMode === 'SIGNATURE' && spec.signature?.protocol !== 'WSSE') report('SIGNATURE provider without signature.protocol');
        if (spec.authMode === 'NONE' && (spec.tokenUrl || spec.authorizationUrl)) report('NONE provider with token endpoints');
        if (spec.pluginInstall && spec.authMode !== 'INSTALL_PLUGIN') report('pluginInstall on a provider that is not INSTALL_PLUGIN');
        if (spec.authMode === 'INSTALL_PLUGIN') {
          if (!spec.pluginInstall?.installUrl.startsWith('https://')) report('INSTALL_PLUGIN provider without an https install page');
          const templates = [...Object.values(spec.proxy?.headers ?? {}), ...Object.values(spec.proxy?.query ?? {})];
          if (!templates.some((t) => t.includes('${apiKey}'))) report('INSTALL_PLUGIN provider that never sends the installed credential');
        }
      }),
    ).toEqual([]);
  });

  it('has a request token URL for every OAUTH1 provider', () => {
    const oauth1 = entries.filter(([, m]) => m.spec.authMode === 'OAUTH1');
    expect(oauth1.length).toBeGreaterThan(0);
    for (const [file, m] of oauth1) expect([file, m.spec.requestTokenUrl?.startsWith('https://')]).toEqual([file, true]);
  });

  it('has complete pagination settings', () => {
    expect(
      problems((m, report) => {
        const pg = m.spec.proxy?.paginate;
        if (!pg) return;
        if (!pg.type) report('paginate has no type');
        if (pg.type === 'cursor') {
          if (!pg.cursorPathInResponse) report('cursor pagination needs cursorPathInResponse');
          if (!pg.cursorNameInRequest) report('cursor pagination needs cursorNameInRequest');
        }
        for (const f of ['cursorPathInResponse', 'responsePath'] as const) {
          if (pg[f] !== undefined && !/^[A-Za-z0-9_$@-]+(\.[A-Za-z0-9_$@-]+)*$/.test(pg[f]!))
            report(`paginate.${f} ${pg[f]} is not a dotted path`);
        }
        for (const f of ['cursorNameInRequest', 'limitNameInRequest'] as const) {
          if (pg[f] !== undefined && !/^[A-Za-z0-9_.[\]-]+$/.test(pg[f]!)) report(`paginate.${f} ${pg[f]} is not a parameter name`);
        }
        if (pg.type !== 'cursor' && (pg.cursorPathInResponse || pg.cursorNameInRequest)) report(`cursor settings on ${pg.type} pagination`);
      }),
    ).toEqual([]);
  });

  it('keeps OAuth settings in the shape the authorization flow expects', () => {
    expect(
      problems((m, report) => {
        const s = m.spec;
        if (s.scopeSeparator === ' ') report('scopeSeparator " " is the default; leave it out');
        for (const where of ['authorizationParams', 'tokenParams'] as const) {
          for (const [k, v] of Object.entries(s[where] ?? {}))
            if (typeof v !== 'string') report(`${where}.${k} is not a string (quote it)`);
        }
        if (s.defaultScopes?.some((sc) => /\s/.test(sc))) report('a default scope contains whitespace; list scopes separately');
        if (s.defaultScopes && new Set(s.defaultScopes).size !== s.defaultScopes.length) report('duplicate default scopes');
        if (s.disablePkce !== undefined && typeof s.disablePkce !== 'boolean') report('disablePkce must be a boolean');
      }),
    ).toEqual([]);
  });

  it('labels every provider with categories and a docs link', () => {
    expect(
      problems((m, report) => {
        if (!m.spec.displayName?.trim()) report('no displayName');
        if (!m.spec.categories?.length) report('no categories');
        for (const c of m.spec.categories ?? []) if (!/^[a-z][a-z0-9-]*$/.test(c)) report(`category ${c} is not lowercase kebab`);
        if (!m.spec.docs) report('no docs link');
      }),
    ).toEqual([]);
  });

  it('contains nothing that looks like a secret', () => {
    const out = files
      .filter((f) => /(sk-[A-Za-z0-9]{20,}|sk_live_|xox[bpa]-[0-9]|ghp_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|-----BEGIN)/.test(f.text))
      .map((f) => f.file);
    expect(out).toEqual([]);
  });

  it('represents every auth mode the issue names', () => {
    const modes = new Set(entries.map(([, m]) => m.spec.authMode));
    for (const mode of ['OAUTH2', 'API_KEY', 'OAUTH2_CC', 'BASIC', 'OAUTH1'])
      expect([mode, modes.has(mode as never)]).toEqual([mode, true]);
    expect(modes.has('JWT') || modes.has('APP')).toBe(true);
  });

  it('covers the categories application teams connect to', () => {
    const categories = new Set(entries.flatMap(([, m]) => m.spec.categories ?? []));
    for (const c of [
      'dev-tools',
      'communication',
      'email',
      'calendar',
      'crm',
      'support',
      'ticketing',
      'accounting',
      'payment',
      'storage',
      'marketing',
      'hr',
      'ai',
    ]) {
      expect([c, categories.has(c)]).toEqual([c, true]);
    }
  });

  it('includes well-known providers with the auth mode each needs', () => {
    const mode = (name: string) => [...manifests.values()].find((m) => m.metadata.name === name)?.spec.authMode;
    expect(mode('github')).toBe('OAUTH2');
    expect(mode('slack')).toBe('OAUTH2');
    expect(mode('google-calendar')).toBe('OAUTH2');
    expect(mode('trello')).toBe('OAUTH1');
    expect(mode('stripe')).toBe('OAUTH2');
    expect(mode('stripe-api-key')).toBe('API_KEY');
    // Stripe Connect's former name still answers: an alias of `stripe`, not a second manifest.
    expect([...manifests.values()].find((m) => m.metadata.name === 'stripe')?.spec.aliases).toContain('stripe-connect');
    expect(manifests.has('stripe-connect.yaml')).toBe(false);
    // Names the common catalog uses mean its mode; the variant keeps the other one (issue #44).
    const plainAndVariant: Array<[string, string, string, string]> = [
      ['okta', 'OAUTH2', 'okta-api-key', 'API_KEY'],
      ['bamboohr', 'OAUTH2', 'bamboohr-basic', 'BASIC'],
      ['greenhouse', 'OAUTH2', 'greenhouse-basic', 'BASIC'],
      ['snowflake', 'OAUTH2', 'snowflake-jwt', 'JWT'],
      ['datadog', 'API_KEY', 'datadog-basic', 'BASIC'],
      ['paypal', 'OAUTH2', 'paypal-cc', 'OAUTH2_CC'],
      ['microsoft-business-central', 'OAUTH2_CC', 'microsoft-business-central-oauth', 'OAUTH2'],
    ];
    for (const [plain, plainMode, variant, variantMode] of plainAndVariant) {
      expect([plain, mode(plain), variant, mode(variant)]).toEqual([plain, plainMode, variant, variantMode]);
    }
  });

  it("never tells the end user to look a value up from an API or a token answer (such values are the Provider's `from`)", () => {
    expect(
      problems((m, report) => {
        const texts: Array<[string, string]> = Object.entries(m.spec.fieldLabels ?? {}).map(([k, v]) => [`fieldLabels.${k}`, v]);
        for (const f of configFields(m.spec)) if (f.label) texts.push([`connectionConfiguration.${f.name}.label`, f.label]);
        for (const [k, h] of Object.entries(m.spec.fieldHelp ?? {})) {
          for (const [lang, v] of Object.entries({ '': h.description, ...(h.descriptions ?? {}) })) {
            if (v) texts.push([`fieldHelp.${k}.description${lang ? `s.${lang}` : ''}`, v]);
          }
        }
        for (const [where, text] of texts) if (LOOKUP_WORDING.test(text)) report(`${where} sends the end user to look it up: "${text}"`);
      }),
    ).toEqual([]);
  });

  it('would catch a label that sends the end user to an API (the check above is not vacuous)', () => {
    const LOOKUP_SAMPLES = [
      'Instance host (instance_url from the token response without https://)',
      'Atlassian site cloud ID (from https://api.atlassian.com/oauth/token/accessible-resources)',
      'Company ID (realmId, returned on the OAuth redirect)',
      'Tenant ID (from GET https://api.xero.com/connections)',
    ];
    expect(LOOKUP_SAMPLES.filter((t) => !LOOKUP_WORDING.test(t))).toEqual([]);
    expect(LOOKUP_WORDING.test('Your Zendesk subdomain (the part before .zendesk.com)')).toBe(false);
  });

  it('lists every manifest exactly once in kustomization.yaml', () => {
    const kust = loadAllYaml(readFileSync(join(CATALOG_DIR, 'kustomization.yaml'), 'utf8'))[0] as { resources?: string[] };
    const resources = kust.resources ?? [];
    expect(resources.filter((r, i) => resources.indexOf(r) !== i)).toEqual([]);
    expect([...resources].sort()).toEqual(catalogFileNames());
  });
});
