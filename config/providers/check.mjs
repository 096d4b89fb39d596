#!/usr/bin/env node
// Offline sanity check for the provider catalog in this folder.
// Usage: node config/providers/check.mjs [--stats] [--write-kustomization]
// (needs js-yaml from the repo's node_modules; --write-kustomization regenerates kustomization.yaml from the files here)
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, '..', '..', 'package.json'));
const yaml = require('js-yaml');

// Structural validation against the CRD's own openAPIV3Schema (types, unknown fields, enums, lengths, patterns).
const crdPath = join(here, '..', '..', 'crds', 'latchkey.dev_providers.yaml');
const crd = yaml.load(readFileSync(crdPath, 'utf8'));
const rootSchema = crd.spec.versions.find((v) => v.storage).schema.openAPIV3Schema;
function validateSchema(value, schema, path, report) {
  if (value === undefined || value === null || !schema) return;
  const t = schema.type;
  const actual = Array.isArray(value) ? 'array' : typeof value === 'number' && Number.isInteger(value) ? 'integer' : typeof value;
  if (t && !(t === actual || (t === 'number' && actual === 'integer'))) { report(`${path}: expected ${t}, got ${actual}`); return; }
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
    for (const r of schema.required ?? []) if (!(r in value)) report(`${path}: missing required field ${r}`);
    if (schema['x-kubernetes-preserve-unknown-fields']) return;
    for (const [k, v] of Object.entries(value)) {
      if (schema.properties?.[k]) validateSchema(v, schema.properties[k], `${path}.${k}`, report);
      else if (schema.additionalProperties) validateSchema(v, schema.additionalProperties, `${path}.${k}`, report);
      else if (schema.properties) report(`${path}: unknown field ${k} (would be pruned)`);
    }
  }
}

const AUTH_MODES = ['OAUTH1', 'OAUTH2', 'OAUTH2_CC', 'BASIC', 'API_KEY', 'APP_STORE', 'CUSTOM', 'APP', 'NONE', 'TBA', 'JWT', 'BILL', 'TWO_STEP', 'SIGNATURE', 'INSTALL_PLUGIN'];
const SPEC_KEYS = new Set(['displayName', 'categories', 'authMode', 'authorizationUrl', 'tokenUrl', 'refreshUrl', 'requestTokenUrl', 'defaultScopes', 'scopeSeparator', 'authorizationParams', 'tokenParams', 'tokenRequestAuthMethod', 'disablePkce', 'connectionConfiguration', 'fieldLabels', 'modeOptions', 'postConnectionScript', 'webhookRoutingScript', 'docs', 'proxy']);
const PROXY_KEYS = new Set(['baseUrl', 'decompress', 'headers', 'query', 'paginate']);
const PAGINATE_KEYS = new Set(['type', 'cursorPathInResponse', 'limitNameInRequest', 'cursorNameInRequest', 'responsePath']);
const URL_FIELDS = ['authorizationUrl', 'tokenUrl', 'refreshUrl', 'requestTokenUrl', 'docs'];
const VALUE_PLACEHOLDERS = new Set(['apiKey', 'username', 'password', 'accessToken']);
const NAME_RE = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
const KEY_RE = /^[A-Za-z][A-Za-z0-9_]*$/;
const FIELD_LABEL_KEYS = new Set(['apiKey', 'username', 'password', 'clientId', 'clientSecret']);

const errors = [];
const err = (file, msg) => errors.push(`${file}: ${msg}`);
const files = readdirSync(here).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort();
const names = new Map();
const byMode = {};
const byCategory = {};

function placeholders(s) {
  return [...String(s).matchAll(/\$\{([^}]*)\}/g)].map((m) => m[1]);
}

for (const file of files) {
  const text = readFileSync(join(here, file), 'utf8');
  if (text.includes('\t')) err(file, 'contains a tab');
  let docs;
  try {
    docs = yaml.loadAll(text);
  } catch (e) {
    err(file, `does not parse: ${e.message}`);
    continue;
  }
  if (docs.length !== 1) { err(file, `expected one document, got ${docs.length}`); continue; }
  const doc = docs[0];
  if (doc?.apiVersion !== 'latchkey.dev/v1alpha1') err(file, 'apiVersion is not latchkey.dev/v1alpha1');
  if (doc?.kind !== 'Provider') err(file, 'kind is not Provider');
  const name = doc?.metadata?.name;
  if (name !== basename(file, '.yaml')) err(file, `metadata.name ${name} does not match the file name`);
  if (!NAME_RE.test(name ?? '')) err(file, `name ${name} is not lowercase kebab-case`);
  if (doc?.metadata?.namespace) err(file, 'Provider is cluster-scoped: no namespace');
  if (names.has(name)) err(file, `duplicate name (also in ${names.get(name)})`);
  names.set(name, file);
  for (const k of Object.keys(doc)) if (!['apiVersion', 'kind', 'metadata', 'spec'].includes(k)) err(file, `unexpected top-level key ${k}`);
  validateSchema(doc, rootSchema, '', (m) => err(file, `schema${m}`));
  const spec = doc?.spec ?? {};
  for (const k of Object.keys(spec)) if (!SPEC_KEYS.has(k)) err(file, `unknown spec field ${k}`);
  for (const k of Object.keys(spec.proxy ?? {})) if (!PROXY_KEYS.has(k)) err(file, `unknown proxy field ${k}`);
  for (const k of Object.keys(spec.proxy?.paginate ?? {})) if (!PAGINATE_KEYS.has(k)) err(file, `unknown paginate field ${k}`);
  if (!spec.displayName) err(file, 'missing displayName');
  const mode = spec.authMode;
  if (!AUTH_MODES.includes(mode)) err(file, `authMode ${mode} not in the enum`);
  byMode[mode] = (byMode[mode] ?? 0) + 1;
  for (const c of spec.categories ?? []) {
    if (!/^[a-z][a-z0-9-]*$/.test(c)) err(file, `category ${c} is not lowercase kebab`);
    byCategory[c] = (byCategory[c] ?? 0) + 1;
  }
  if (!(spec.categories?.length > 0)) err(file, 'no categories');
  if (!spec.docs) err(file, 'no docs link');

  // CEL rules of the CRD
  if (['OAUTH2', 'OAUTH1'].includes(mode) && !(spec.authorizationUrl && spec.tokenUrl)) err(file, `${mode} needs authorizationUrl and tokenUrl`);
  if (['OAUTH2_CC', 'APP'].includes(mode) && !spec.tokenUrl) err(file, `${mode} needs tokenUrl`);
  if (mode === 'OAUTH1' && !spec.requestTokenUrl) err(file, 'OAUTH1 needs requestTokenUrl');
  const pg = spec.proxy?.paginate;
  if (pg) {
    if (pg.type && !['cursor', 'link', 'offset'].includes(pg.type)) err(file, `paginate.type ${pg.type} not in the enum`);
    if (pg.type === 'cursor' && !(pg.cursorPathInResponse && pg.cursorNameInRequest)) err(file, 'cursor pagination needs cursorPathInResponse and cursorNameInRequest');
  }

  // Convention checks
  const declared = new Set(spec.connectionConfiguration ?? []);
  for (const k of declared) if (!KEY_RE.test(k)) err(file, `connection configuration key ${k} does not match ${KEY_RE}`);
  const used = new Set();
  const checkUrl = (field, value) => {
    if (value === undefined) return;
    if (typeof value !== 'string') { err(file, `${field} is not a string`); return; }
    if (!value.startsWith('https://')) err(file, `${field} is not an https URL: ${value}`);
    for (const p of placeholders(value)) {
      const m = /^connectionConfig\.([A-Za-z][A-Za-z0-9_]*)$/.exec(p);
      if (!m) err(file, `${field} has placeholder \${${p}} (only connectionConfig.KEY is allowed in URLs)`);
      else used.add(m[1]);
    }
  };
  for (const f of URL_FIELDS) checkUrl(f, spec[f]);
  checkUrl('proxy.baseUrl', spec.proxy?.baseUrl);
  if (spec.docs && placeholders(spec.docs).length) err(file, 'docs must not contain placeholders');
  for (const where of ['headers', 'query']) {
    const obj = spec.proxy?.[where] ?? {};
    for (const [k, v] of Object.entries(obj)) {
      if (where === 'headers' && k !== k.toLowerCase()) err(file, `header ${k} is not lowercase`);
      if (typeof v !== 'string') { err(file, `proxy.${where}.${k} is not a string`); continue; }
      for (const p of placeholders(v)) {
        const m = /^connectionConfig\.([A-Za-z][A-Za-z0-9_]*)$/.exec(p);
        if (m) used.add(m[1]);
        else if (!VALUE_PLACEHOLDERS.has(p)) err(file, `proxy.${where}.${k} uses unknown placeholder \${${p}}`);
        if (p === 'apiKey' && mode !== 'API_KEY') err(file, `\${apiKey} used by a ${mode} provider`);
        if ((p === 'username' || p === 'password') && mode !== 'BASIC') err(file, `\${${p}} used by a ${mode} provider`);
      }
    }
  }
  for (const where of ['authorizationParams', 'tokenParams']) {
    for (const [k, v] of Object.entries(spec[where] ?? {})) {
      if (typeof v !== 'string') err(file, `${where}.${k} is not a string (quote it)`);
      for (const p of placeholders(v)) {
        const m = /^connectionConfig\.([A-Za-z][A-Za-z0-9_]*)$/.exec(p);
        if (m) used.add(m[1]); else err(file, `${where}.${k} uses unknown placeholder \${${p}}`);
      }
    }
  }
  const walk = (v) => {
    if (typeof v === 'string') {
      for (const p of placeholders(v)) {
        const m = /^connectionConfig\.([A-Za-z][A-Za-z0-9_]*)$/.exec(p);
        if (m) used.add(m[1]); else err(file, `modeOptions uses unknown placeholder \${${p}}`);
      }
    } else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x);
  };
  walk(spec.modeOptions);
  for (const u of used) if (!declared.has(u)) err(file, `\${connectionConfig.${u}} is used but not in connectionConfiguration`);
  for (const d of declared) if (!used.has(d)) err(file, `connection configuration key ${d} is declared but never used`);
  for (const k of Object.keys(spec.fieldLabels ?? {})) if (!FIELD_LABEL_KEYS.has(k) && !declared.has(k)) err(file, `fieldLabels.${k} is neither a credential field nor a configuration key`);

  if (mode === 'API_KEY') {
    const all = [...Object.values(spec.proxy?.headers ?? {}), ...Object.values(spec.proxy?.query ?? {})].join(' ');
    if (!all.includes('${apiKey}')) err(file, 'API_KEY provider does not place ${apiKey} in proxy.headers or proxy.query');
  }
  if (['OAUTH2', 'OAUTH1', 'OAUTH2_CC', 'APP', 'API_KEY', 'BASIC', 'JWT'].includes(mode) && !spec.proxy?.baseUrl) err(file, 'no proxy.baseUrl');
  if (spec.scopeSeparator === ' ') err(file, 'scopeSeparator " " is the default; leave it out');
  if (spec.defaultScopes && !Array.isArray(spec.defaultScopes)) err(file, 'defaultScopes must be a list');
  if (spec.tokenRequestAuthMethod && !['basic', 'body'].includes(spec.tokenRequestAuthMethod)) err(file, 'tokenRequestAuthMethod must be basic or body');
  if (spec.disablePkce !== undefined && typeof spec.disablePkce !== 'boolean') err(file, 'disablePkce must be a boolean');
  if (/(sk-[A-Za-z0-9]{20,}|xox[bpa]-|ghp_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16})/.test(text)) err(file, 'looks like it contains a secret');
}

// kustomization lists every manifest exactly once
if (process.argv.includes('--write-kustomization')) {
  const body = ['apiVersion: kustomize.config.k8s.io/v1beta1', 'kind: Kustomization', 'resources:', ...files.map((f) => `  - ${f}`), ''].join('\n');
  writeFileSync(join(here, 'kustomization.yaml'), body);
}
try {
  const kust = yaml.load(readFileSync(join(here, 'kustomization.yaml'), 'utf8'));
  const res = kust?.resources ?? [];
  const set = new Set(res);
  if (set.size !== res.length) errors.push('kustomization.yaml: duplicate resources');
  for (const f of files) if (!set.has(f)) errors.push(`kustomization.yaml: ${f} is not listed`);
  for (const r of res) if (!files.includes(r)) errors.push(`kustomization.yaml: ${r} does not exist`);
} catch (e) {
  errors.push(`kustomization.yaml: ${e.message}`);
}

if (process.argv.includes('--stats')) {
  console.log(`providers: ${files.length}`);
  console.log('by auth mode:', JSON.stringify(Object.fromEntries(Object.entries(byMode).sort())));
  console.log('by category:', JSON.stringify(Object.fromEntries(Object.entries(byCategory).sort((a, b) => b[1] - a[1]))));
}
if (errors.length) {
  for (const e of errors) console.error(e);
  console.error(`${errors.length} problem(s) in ${files.length} provider file(s)`);
  process.exit(1);
}
console.log(`ok: ${files.length} provider file(s)`);
