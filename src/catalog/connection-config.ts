/**
 * Connection configuration rules: what a Provider allows for each `${connectionConfig.KEY}` value, the
 * check of a connection's configuration against them, and the host check of every URL after templating.
 * Values come from end users and application backends, so they are untrusted: a value that ends up in a
 * URL host could send the integration's client secret or a refresh token to another server.
 */
import { LatchkeyError, type ErrorDetail } from '../domain/errors.js';
import type { ConnectionConfigField, ProviderSpec } from '../k8s/resources.js';
import { fillTemplate } from './template.js';
import { urlPathProblem } from './url-path.js';

/** A configuration key with its rule; an old plain string `x` reads as `{ name: x, required: true }`. */
export interface ConfigField extends ConnectionConfigField {
  required: boolean;
}

const PLACEHOLDER = /\$\{connectionConfig\.([A-Za-z0-9_]+)\}/g;
const DNS_LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const HOSTNAME = new RegExp(`^(?=.{1,253}$)${DNS_LABEL}(?:\\.${DNS_LABEL})*$`, 'i');
const IPV4ISH = /^[0-9.]+$|^0x/i;
const MAX_VALUE = 1024;

export function configFields(spec: Pick<ProviderSpec, 'connectionConfiguration'>): ConfigField[] {
  return (spec.connectionConfiguration ?? []).map((f: string | ConnectionConfigField) =>
    typeof f === 'string' ? { name: f, required: true } : { ...f, required: f.required ?? true },
  );
}

export function configFieldNames(spec: Pick<ProviderSpec, 'connectionConfiguration'>): string[] {
  return configFields(spec).map((f) => f.name);
}

/** Keys with the urlPath rule: filled after a URL's host, their `/` kept (src/catalog/url-path.ts). */
export function pathKeys(fields: ConfigField[]): Set<string> {
  return new Set(fields.filter((f) => f.urlPath).map((f) => f.name));
}

/** The URL templates of a provider that Latchkey sends requests (or the browser) to. */
export function urlTemplates(spec: ProviderSpec): Array<{ field: string; template: string }> {
  const out: Array<{ field: string; template: string }> = [];
  for (const field of ['authorizationUrl', 'tokenUrl', 'refreshUrl', 'requestTokenUrl'] as const) {
    const t = spec[field];
    if (t) out.push({ field, template: t });
  }
  if (spec.proxy?.baseUrl) out.push({ field: 'proxy.baseUrl', template: spec.proxy.baseUrl });
  const twoStepUrl = spec.twoStep?.tokenUrl;
  if (typeof twoStepUrl === 'string') out.push({ field: 'twoStep.tokenUrl', template: twoStepUrl });
  const aud = (spec.modeOptions?.claims as Record<string, unknown> | undefined)?.aud;
  if (typeof aud === 'string' && /^https?:\/\//i.test(aud)) out.push({ field: 'modeOptions.claims.aud', template: aud });
  // Post-connection steps carry the access token: their hosts are checked like the token URL's.
  for (const step of spec.postConnection?.steps ?? []) {
    const url = providerUrlTemplate(spec, step.url);
    if (url) out.push({ field: `postConnection.steps.${step.name}.url`, template: url });
  }
  return out;
}

/**
 * A URL a Provider declares beside its base (a post-connection step's, the verification path, the
 * revocation URL) as a template: absolute as written, or a path under proxy.baseUrl (undefined without
 * one). The catalog test resolves every such URL with this and compares it with the URL the provider's
 * docs give (`documentedUrl`), so a change of a base cannot move them unnoticed.
 */
export function providerUrlTemplate(spec: ProviderSpec, url: string): string | undefined {
  if (!url.startsWith('/')) return url;
  return spec.proxy?.baseUrl ? spec.proxy.baseUrl.replace(/\/+$/, '') + url : undefined;
}

/**
 * The host part (with port) of a URL template, or undefined when it is not an absolute URL; `end` is where the
 * host ends in the template. The host runs to the first `/`, `?` or `#`, less the placeholders of urlPath keys
 * that end it (`https://${connectionConfig.host}${connectionConfig.contextPath}/rest`): a urlPath placeholder
 * anywhere else in it stays part of the host, where the catalog rules and the value check refuse it.
 */
export function templateHost(
  template: string,
  urlPathKeys: ReadonlySet<string> = new Set(),
): { scheme: string; host: string; end: number } | undefined {
  const m = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)/i.exec(template);
  if (!m) return undefined;
  let host = m[2]!;
  for (let last = /\$\{connectionConfig\.([A-Za-z0-9_]+)\}$/.exec(host); last && urlPathKeys.has(last[1]!);) {
    host = host.slice(0, last.index);
    last = /\$\{connectionConfig\.([A-Za-z0-9_]+)\}$/.exec(host);
  }
  return { scheme: m[1]!.toLowerCase(), host, end: m[0].length - m[2]!.length + host.length };
}

/** Keys whose placeholder sits in the host of one of the provider's URLs. */
export function hostKeys(spec: ProviderSpec): Set<string> {
  const keys = new Set<string>();
  const urlPathKeys = pathKeys(configFields(spec));
  for (const { template } of urlTemplates(spec)) {
    const h = templateHost(template, urlPathKeys);
    if (h) for (const m of h.host.matchAll(PLACEHOLDER)) keys.add(m[1]!);
  }
  return keys;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function placeholderRegex(field: ConfigField | undefined): string {
  if (field?.enum?.length) return `(?:${field.enum.map((v) => escape(v.toLowerCase())).join('|')})`;
  if (field?.hostSuffixes?.length)
    return `(?:${DNS_LABEL}\\.)*(?:${field.hostSuffixes.map((s) => escape(s.toLowerCase().replace(/^\./, ''))).join('|')})`;
  // Any public host name, never an address (all digits and dots, or hex): the value check refuses them too.
  if (field?.anyHost) return `(?![0-9.]+$)(?!0x)${DNS_LABEL}(?:\\.${DNS_LABEL})+`;
  // A pattern or no rule: one DNS label, so the literal rest of the template keeps the host.
  return DNS_LABEL;
}

/**
 * Why a host template declares no host (undefined when it does): after its last placeholder the host
 * must keep a literal domain (`${subdomain}.zendesk.com`), or that placeholder's key must be an enum,
 * host suffixes or (for modes that send no integration secret) any public host.
 */
export function undeclaredHost(hostTemplate: string, fields: ConfigField[]): string | undefined {
  const matches = [...hostTemplate.matchAll(PLACEHOLDER)];
  const last = matches.at(-1);
  if (!last) return undefined;
  const rest = hostTemplate.slice(last.index + last[0].length);
  if (/^\.[a-z0-9-]+\.[a-z0-9-]+/i.test(rest)) return undefined;
  const f = fields.find((x) => x.name === last[1]);
  if (f?.enum?.length || f?.hostSuffixes?.length || f?.anyHost) return undefined;
  return `the host of "${hostTemplate}" ends in \${connectionConfig.${last[1]}}, which has no enum, hostSuffixes or anyHost rule`;
}

/**
 * Where a Provider puts its urlPath keys wrong (empty when nowhere): such a key is only the start of a URL's path,
 * right after its host, or ends a path segment (`/base${connectionConfig.contextPath}/rest`); it is never in a
 * host, a query or a fragment, never after a `/` (an empty segment) and always followed by `/`, `?`, `#` or
 * the end. It carries no other rule (pattern, enum, hostSuffixes, anyHost).
 */
export function urlPathProblems(spec: ProviderSpec): string[] {
  const fields = configFields(spec);
  const urlPathKeys = pathKeys(fields);
  if (!urlPathKeys.size) return [];
  const problems: string[] = [];
  for (const f of fields)
    if (f.urlPath && (f.pattern !== undefined || f.enum?.length || f.hostSuffixes?.length || f.anyHost))
      problems.push(`connectionConfiguration "${f.name}" has urlPath and another rule (pattern, enum, hostSuffixes or anyHost)`);
  for (const { field, template } of urlTemplates(spec)) {
    for (const m of template.matchAll(PLACEHOLDER)) {
      if (!urlPathKeys.has(m[1]!)) continue;
      const where = `${field}: \${connectionConfig.${m[1]}}`;
      const t = templateHost(template, urlPathKeys);
      const after = template[m.index + m[0].length];
      const before = template.slice(t?.end ?? 0, m.index);
      if (!t) problems.push(`${where} is in a URL that is not absolute`);
      else if (m.index < t.end) problems.push(`${where} is in the URL's host, where only host names go`);
      else if (!t.host) problems.push(`${where} has no host before it`);
      else if (/[?#]/.test(before)) problems.push(`${where} is in the URL's query or fragment, not its path`);
      else if (before.endsWith('/')) problems.push(`${where} follows a "/" (its value starts with one)`);
      else if (after !== undefined && !'/?#'.includes(after)) problems.push(`${where} must be followed by "/", "?", "#" or the end`);
    }
  }
  return problems;
}

/** The hosts a URL template may reach, as an anchored, case-insensitive regular expression. */
export function hostRegex(hostTemplate: string, fields: ConfigField[]): RegExp | undefined {
  if (undeclaredHost(hostTemplate, fields)) return undefined;
  let src = '';
  let at = 0;
  for (const m of hostTemplate.matchAll(PLACEHOLDER)) {
    src += escape(hostTemplate.slice(at, m.index).toLowerCase()) + placeholderRegex(fields.find((f) => f.name === m[1]));
    at = m.index + m[0].length;
  }
  src += escape(hostTemplate.slice(at).toLowerCase());
  return new RegExp(`^${src}$`, 'i');
}

const configError = (errors: ErrorDetail[]) =>
  new LatchkeyError(
    'invalid_input',
    'invalid_connection_config',
    `Invalid connection configuration: ${errors.map((e) => e.message).join('; ')}`,
    { errors },
  );

/** What is wrong with one value (undefined when it is fine). Messages name the key, never the value. */
function valueProblem(f: ConfigField, value: string, inHost: boolean): string | undefined {
  const name = `"${f.name}"`;
  if (f.urlPath) {
    if (inHost) return `${name} is a URL path and the provider puts it in a URL host`;
    const problem = urlPathProblem(value);
    return problem && `${name} ${problem}`;
  }
  if (value.length > MAX_VALUE) return `${name} is longer than ${MAX_VALUE} characters`;
  if (/[\u0000-\u001f\u007f]/.test(value)) return `${name} contains control characters`;
  if (f.enum?.length) return f.enum.includes(value) ? undefined : `${name} must be one of ${f.enum.join(', ')}`;
  if (f.hostSuffixes?.length || f.anyHost) {
    if (!HOSTNAME.test(value) || IPV4ISH.test(value) || !value.includes('.')) return `${name} must be a host name`;
    const host = value.toLowerCase();
    if (f.hostSuffixes?.length) {
      const ok = f.hostSuffixes.some((s) => {
        const suffix = s.toLowerCase().replace(/^\./, '');
        return host === suffix || host.endsWith(`.${suffix}`);
      });
      if (!ok) return `${name} must be a host name ending in ${f.hostSuffixes.join(', ')}`;
    }
    return undefined;
  }
  if (f.pattern !== undefined && !new RegExp(`^(?:${f.pattern})$`, 'u').test(value)) return `${name} does not have the expected format`;
  if (inHost && !new RegExp(`^${DNS_LABEL}$`, 'i').test(value)) return `${name} must be a single DNS label (letters, digits, hyphens)`;
  if (value === '.' || value === '..') return `${name} may not be "." or ".."`;
  return undefined;
}

export interface ConfigCheckOptions {
  /** Where the configuration sits in the request body, for the error paths. */
  path?: string;
  /** Keys that are not declared by the Provider are refused (Connect forms); the REST API keeps them. */
  strict?: boolean;
  /** Keys the provider returns later in the flow (`from`): not required yet; URLs using them are checked once they are known. */
  later?: ReadonlySet<string>;
}

/**
 * Why one value a provider returned breaks its key's rule (undefined when it is fine): the same check as
 * a typed value's, so a value taken from an answer is held to it before it is stored or used in a URL.
 */
export function configValueProblem(spec: ProviderSpec, name: string, value: string): string | undefined {
  const field = configFields(spec).find((f) => f.name === name);
  return field ? valueProblem(field, value.trim(), hostKeys(spec).has(name)) : `"${name}" is not a configuration key`;
}

/**
 * Checks a connection's whole configuration against the Provider's rules: declared values must follow
 * their rule, required keys must be present (defaults fill them), and values used in a URL host are
 * checked again after templating. Returns the configuration with defaults; throws a 400
 * `invalid_connection_config` naming every bad or missing key.
 */
export function checkConnectionConfig(
  spec: ProviderSpec,
  config: Record<string, unknown> | undefined,
  opts: ConfigCheckOptions = {},
): Record<string, unknown> {
  const path = opts.path ?? 'connection_config';
  const fields = configFields(spec);
  const inHost = hostKeys(spec);
  const urlPathKeys = pathKeys(fields);
  const out: Record<string, unknown> = { ...(config ?? {}) };
  const errors: ErrorDetail[] = [];
  const missing: string[] = [];
  for (const f of fields) {
    let v = out[f.name];
    if (typeof v === 'number' && Number.isFinite(v)) v = String(v);
    if (v === undefined || v === null || v === '') {
      if (opts.later?.has(f.name)) delete out[f.name];
      else if (f.default !== undefined) out[f.name] = f.default;
      else if (f.required && !f.urlPath) missing.push(f.name);
      else delete out[f.name];
      continue;
    }
    if (typeof v !== 'string') {
      errors.push({ path: `${path}.${f.name}`, message: `"${f.name}" must be a string` });
      continue;
    }
    const value = v.trim();
    const problem = valueProblem(f, value, inHost.has(f.name));
    if (problem) errors.push({ path: `${path}.${f.name}`, message: problem });
    else out[f.name] = value;
  }
  if (missing.length) errors.push(...missing.map((k) => ({ path: `${path}.${k}`, message: `"${k}" is required` })));
  if (opts.strict) {
    const declared = new Set(fields.map((f) => f.name));
    for (const k of Object.keys(out)) if (!declared.has(k)) errors.push({ path: `${path}.${k}`, message: `unknown field "${k}"` });
  }
  if (!errors.length) {
    // Templating rules that a value check alone cannot see (an undeclared placeholder in a host).
    for (const { field, template } of urlTemplates(spec)) {
      const keys = [...template.matchAll(PLACEHOLDER)].map((m) => m[1]!);
      if (keys.some((k) => !urlPathKeys.has(k) && (out[k] === undefined || out[k] === ''))) continue;
      const problem = urlProblem(template, fillTemplate(template, out, { pathKeys: urlPathKeys }), fields);
      if (problem) errors.push({ path, message: `${field}: ${problem}` });
    }
  }
  if (errors.length) throw configError(errors);
  return out;
}

/** Why a filled URL leaves the hosts its template declares (undefined when it does not). */
export function urlProblem(template: string, filled: string, fields: ConfigField[]): string | undefined {
  const t = templateHost(template, pathKeys(fields));
  if (!t) return undefined;
  const re = hostRegex(t.host, fields);
  if (!re) return 'the provider declares no host for this URL';
  let url: URL;
  try {
    url = new URL(filled);
  } catch {
    return 'the configuration does not make a valid URL';
  }
  if (url.protocol !== `${t.scheme}:` || url.username || url.password || !(re.test(url.host) || sameLiteralHost(t, url))) {
    return "the configuration points this URL outside the provider's hosts";
  }
  return undefined;
}

/** A host without placeholders, compared as the URL parser writes it ([::ffff:127.0.0.1] is [::ffff:7f00:1]). */
function sameLiteralHost(t: { scheme: string; host: string }, url: URL): boolean {
  if (t.host.includes('${')) return false;
  try {
    return new URL(`${t.scheme}://${t.host}`).host === url.host;
  } catch {
    return false;
  }
}

/**
 * Fills a provider URL template and checks that the result stays on the provider's declared hosts.
 * Throws a 400 `invalid_connection_config` (missing keys included) before anything is sent.
 */
export function fillProviderUrl(spec: ProviderSpec, template: string, config: Record<string, unknown> | undefined): string {
  const fields = configFields(spec);
  const filled = fillTemplate(template, config, { pathKeys: pathKeys(fields) });
  const problem = urlProblem(template, filled, fields);
  if (problem) throw configError([{ path: 'connection_config', message: problem }]);
  return filled;
}
