/**
 * The fields each served version of each CRD promises, flattened: for every field path its type, whether it is
 * required, and its enum. `npm run crds:baseline` writes them to crds/compatibility.json after a field is added;
 * test/crds/compatibility.unit.test.ts fails when one of them is removed or narrowed in a version that is still
 * served (docs/operations.md, "CRD versions").
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAllYaml } from '@kubernetes/client-node';
import { REPO_ROOT } from './control-plane.js';

export interface FieldPromise {
  type: string;
  required?: true;
  enum?: unknown[];
}

/** `<crd name>` → `<version>` → `<field path>` → what it promises. */
export type CrdFields = Record<string, Record<string, Record<string, FieldPromise>>>;

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  required?: string[];
  enum?: unknown[];
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

interface Crd {
  kind: string;
  metadata: { name: string };
  spec: { versions: Array<{ name: string; served: boolean; schema?: { openAPIV3Schema: Schema } }> };
}

function typeOf(s: Schema): string {
  if (s['x-kubernetes-int-or-string']) return 'int-or-string';
  return s.type ?? (s['x-kubernetes-preserve-unknown-fields'] ? 'any' : 'untyped');
}

function walk(s: Schema, path: string, required: boolean, out: Record<string, FieldPromise>): void {
  out[path] = { type: typeOf(s), ...(required ? { required: true as const } : {}), ...(s.enum ? { enum: [...s.enum] } : {}) };
  for (const [name, child] of Object.entries(s.properties ?? {})) walk(child, `${path}.${name}`, s.required?.includes(name) ?? false, out);
  if (s.items) walk(s.items, `${path}[]`, false, out);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') walk(s.additionalProperties, `${path}{}`, false, out);
}

/** The fields of every served version of the CRDs in `dir`. */
export function crdFields(dir = join(REPO_ROOT, 'crds')): CrdFields {
  const out: CrdFields = {};
  for (const file of readdirSync(dir)
    .filter((f) => f.startsWith('latchkey.dev_') && f.endsWith('.yaml'))
    .sort()) {
    for (const crd of loadAllYaml(readFileSync(join(dir, file), 'utf8')) as Crd[]) {
      if (crd?.kind !== 'CustomResourceDefinition') continue;
      for (const v of crd.spec.versions) {
        if (!v.served || !v.schema) continue;
        const fields: Record<string, FieldPromise> = {};
        walk(v.schema.openAPIV3Schema, '', false, fields);
        delete fields[''];
        (out[crd.metadata.name] ??= {})[v.name] = Object.fromEntries(Object.entries(fields).map(([k, f]) => [k.slice(1), f]));
      }
    }
  }
  return out;
}

/** What `baseline` promises that `current` breaks: removed fields and versions, changed types, new requirements, narrowed enums. */
export function brokenPromises(baseline: CrdFields, current: CrdFields): string[] {
  const broken: string[] = [];
  for (const [crd, versions] of Object.entries(baseline)) {
    for (const [version, fields] of Object.entries(versions)) {
      const now = current[crd]?.[version];
      if (!now) {
        broken.push(`${crd} ${version}: no longer served`);
        continue;
      }
      for (const [path, promise] of Object.entries(fields)) {
        const f = now[path];
        if (!f) broken.push(`${crd} ${version} ${path}: removed`);
        else if (f.type !== promise.type) broken.push(`${crd} ${version} ${path}: type ${promise.type} became ${f.type}`);
        else {
          if (f.required && !promise.required) broken.push(`${crd} ${version} ${path}: became required`);
          if (promise.enum && (!f.enum || promise.enum.some((v) => !f.enum!.includes(v))))
            broken.push(`${crd} ${version} ${path}: enum narrowed`);
          if (!promise.enum && f.enum) broken.push(`${crd} ${version} ${path}: became an enum`);
        }
      }
      // A new required field breaks every object written before it.
      for (const [path, f] of Object.entries(now)) {
        if (f.required && !fields[path] && parentExisted(path, fields)) broken.push(`${crd} ${version} ${path}: new and required`);
      }
    }
  }
  return broken;
}

function parentExisted(path: string, fields: Record<string, FieldPromise>): boolean {
  const cut = Math.max(path.lastIndexOf('.'), path.lastIndexOf('['), path.lastIndexOf('{'));
  return cut <= 0 || fields[path.slice(0, cut)] !== undefined;
}

export const BASELINE_PATH = join(REPO_ROOT, 'crds/compatibility.json');

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const baseline = JSON.parse(readFileSync(BASELINE_PATH, 'utf8')) as CrdFields;
  const current = crdFields();
  const broken = brokenPromises(baseline, current);
  if (broken.length) {
    process.stderr.write(`not written: the CRDs break what the baseline promises (serve a new version instead):\n${broken.join('\n')}\n`);
    process.exit(1);
  }
  writeFileSync(BASELINE_PATH, `${JSON.stringify(current, null, 2)}\n`);
  process.stdout.write(`crds/compatibility.json: ${Object.keys(current).length} CRDs\n`);
}
