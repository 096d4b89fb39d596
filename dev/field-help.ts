/**
 * The rule for help on every field an end user types (a credential field, or a connection
 * configuration key the flow does not fill): each has a `fieldHelp` entry with a description, an
 * https `docsUrl` on the provider's own domain and an example, or says in the manifest why not.
 * The catalog test (test/catalog/field-help.unit.test.ts) applies it to every shipped manifest.
 *
 * In a manifest, three comments are read:
 * - `# fieldHelp <field>: the docs show no example`: the provider's docs show no value's shape, so
 *   the field has no example (one is never invented).
 * - `# fieldHelp docs on <domain>: <reason>`: the provider's own docs live on another registrable
 *   domain than its `docs` page and API (a help centre on a hosted platform, a parent company's site).
 * - `# fieldHelp <field>: the provider's docs are silent: <what was looked for and where>`: nothing on
 *   the provider's own domain says where the value is found. The field then has no docsUrl and no
 *   example (a page or a shape is never invented), and its description says what the value is from
 *   what the manifest states (auth mode, header, host) and that the provider's docs do not say where to find it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadYaml } from '@kubernetes/client-node';
import { configFields } from '../src/catalog/connection-config.js';
import { credentialFields, flowSuppliedKeys } from '../src/connect/connect-modes.js';
import type { FieldHelp, ProviderResource } from '../src/k8s/resources.js';
import { REPO_ROOT } from './repo-root.js';

export const PROVIDERS_DIR = join(REPO_ROOT, 'config/providers');

/** Public suffixes of two labels that appear in the catalog's hosts (the registrable domain is one label more). */
export const TWO_LABEL_SUFFIXES = new Set([
  'co.uk',
  'com.au',
  'co.jp',
  'com.br',
  'co.nz',
  'co.in',
  'com.cn',
  'com.mx',
  'com.tr',
  'com.sg',
  'com.ar',
  'com.co',
  'com.ec',
  'com.cr',
]);

/** The registrable domain of a host name (`api.eu.example.co.uk` -> `example.co.uk`). */
export function registrableDomain(host: string): string {
  const labels = host.toLowerCase().replace(/\.$/, '').split('.');
  const lastTwo = labels.slice(-2).join('.');
  return labels.slice(TWO_LABEL_SUFFIXES.has(lastTwo) ? -3 : -2).join('.');
}

/** The literal part of a URL's host (`https://${connectionConfig.x}.example.com/` -> `example.com`). */
export function literalHost(url: string | undefined): string | undefined {
  const host = /^https?:\/\/([^/?#]*)/.exec(url ?? '')?.[1]?.replace(/:[0-9]+$/, '');
  if (!host) return undefined;
  const rest = host.slice(host.lastIndexOf('}') + 1).replace(/^\./, '');
  return rest.includes('.') ? rest : undefined;
}

export interface TypedField {
  name: string;
  /** A secret (an API key, a password): its example must be visibly a placeholder. */
  secret: boolean;
}

/** The fields the Connect UI asks the end user to type, computed as the product computes them. */
export function typedFields(provider: ProviderResource): TypedField[] {
  const supplied = flowSuppliedKeys(provider.spec);
  return [
    ...credentialFields(provider).map((f) => ({ name: f.name, secret: f.secret })),
    // What the flow fills and what the Integration sets (setBy: integration) are never typed by the end user.
    ...configFields(provider.spec)
      .filter((f) => !supplied.has(f.name) && f.setBy !== 'integration')
      .map((f) => ({ name: f.name, secret: false })),
  ];
}

/** A secret's example shows it is a placeholder: XXXX, an ellipsis or <a name>. */
export const PLACEHOLDER_MARK = /X{4}|x{4}|…|\.\.\.|<[^<>]+>/;

/** `# fieldHelp apiKey: the docs show no example`, or several fields at once: `# fieldHelp username, password: …`. */
const NO_EXAMPLE = /^\s*#\s*fieldHelp\s+([A-Za-z0-9_.-]+(?:\s*,\s*[A-Za-z0-9_.-]+)*):\s*the docs show no example\s*$/gm;
/** `# fieldHelp apiKey: the provider's docs are silent: <what was looked for and where>` (one or several fields). */
const SILENT = /^\s*#\s*fieldHelp\s+([A-Za-z0-9_.-]+(?:\s*,\s*[A-Za-z0-9_.-]+)*):\s*the provider's docs are silent\b:?(.*)$/gm;
/** What a silent field's description says, so the end user reads it too. */
export const SILENT_WORDS = /\bdocs do not say\b/i;
const DOCS_ON = /^\s*#\s*fieldHelp docs on\s+([a-z0-9.-]+\.[a-z]{2,}):\s*\S.*$/gm;

/** What a manifest's help lacks (empty when every typed field has its help). */
export function fieldHelpProblems(provider: ProviderResource, text: string): string[] {
  const s = provider.spec;
  const problems: string[] = [];
  const noExample = new Set([...text.matchAll(NO_EXAMPLE)].flatMap((m) => m[1]!.split(',').map((f) => f.trim())));
  const own = new Set([literalHost(s.docs), literalHost(s.proxy?.baseUrl)].filter((h): h is string => !!h).map(registrableDomain));
  for (const m of text.matchAll(DOCS_ON)) own.add(m[1]!);
  // The same brand under another public suffix (datadoghq.eu, zoho.com.au) is the provider's too.
  const brands = new Set([...own].map((d) => d.split('.')[0]));
  const silent = new Map<string, string>();
  for (const m of text.matchAll(SILENT)) for (const f of m[1]!.split(',')) silent.set(f.trim(), m[2]!.trim());
  const typed = typedFields(provider);
  for (const name of silent.keys())
    if (!typed.some((f) => f.name === name))
      problems.push(`${name}: a comment says the docs are silent, but the end user does not type it`);
  for (const field of typed) {
    const help = Object.hasOwn(s.fieldHelp ?? {}, field.name) ? s.fieldHelp![field.name] : undefined;
    if (!help) {
      problems.push(`${field.name}: no fieldHelp`);
      continue;
    }
    if (!help.description?.trim()) problems.push(`${field.name}: no description`);
    if (silent.has(field.name)) {
      problems.push(...silentProblems(field.name, help, silent.get(field.name)!, noExample.has(field.name)));
      continue;
    }
    const host = /^https:\/\/([^/?#:]+)/.exec(help.docsUrl ?? '')?.[1];
    if (!host) problems.push(`${field.name}: no https docsUrl`);
    else {
      const domain = registrableDomain(host);
      if (!own.has(domain) && !brands.has(domain.split('.')[0]))
        problems.push(
          `${field.name}: docsUrl is on ${host}, not on ${[...own].join(', ') || 'the docs or API domain'} ` +
            `(if the provider's docs live there, say so: "# fieldHelp docs on ${domain}: <why>")`,
        );
    }
    if (help.example === undefined) {
      if (!noExample.has(field.name)) problems.push(`${field.name}: no example (or "# fieldHelp ${field.name}: the docs show no example")`);
    } else if (noExample.has(field.name)) {
      problems.push(`${field.name}: has an example, and a comment saying the docs show none`);
    } else if (field.secret && !PLACEHOLDER_MARK.test(help.example)) {
      problems.push(`${field.name}: the example of a secret must look like a placeholder (XXXX, … or <name>): "${help.example}"`);
    }
  }
  return problems;
}

/** A field whose docs are silent: a reason, a description that says so, and neither a page nor a shape. */
function silentProblems(name: string, help: FieldHelp, reason: string, noExampleComment: boolean): string[] {
  const problems: string[] = [];
  if (!reason) problems.push(`${name}: the comment that the docs are silent names no reason (what was looked for, and where)`);
  if (help.docsUrl !== undefined) problems.push(`${name}: has a docsUrl, and a comment saying the docs are silent`);
  if (help.example !== undefined) problems.push(`${name}: has an example, and a comment saying the docs are silent`);
  if (noExampleComment) problems.push(`${name}: says both that the docs show no example and that they are silent`);
  if (help.description?.trim() && !SILENT_WORDS.test(help.description))
    problems.push(`${name}: the docs are silent, and the description does not say so ("… docs do not say …")`);
  return problems;
}

export interface CatalogManifest {
  file: string;
  text: string;
  provider: ProviderResource;
}

export function readManifests(dir = PROVIDERS_DIR): CatalogManifest[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .sort()
    .map((file) => {
      const text = readFileSync(join(dir, file), 'utf8');
      return { file, text, provider: loadYaml<ProviderResource>(text) };
    });
}
