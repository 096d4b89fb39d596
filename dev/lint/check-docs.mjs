// @ts-check
// Part of `npm run lint`: the docs and comments agree with the code. docs/architecture.md's layer
// table lists what .dependency-cruiser.cjs's LAYERS allow, and every path of a source file named in
// the sources, docs and root files exists. Plain JavaScript (lint runs before the build):
// node dev/lint/check-docs.mjs [repository root, by default this one]
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { layerTableDifferences } from './architecture-table.mjs';
import { missingNamedPaths } from './named-paths.mjs';

const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '../..'));
const SCANNED = ['src', 'dev', 'test', 'bench', 'docs', 'charts', 'README.md', 'Dockerfile', 'package.json', '.dependency-cruiser.cjs'];
const SKIPPED = new Set(['node_modules', 'dist', 'coverage', 'profiles']);

/** @param {string} path @returns {Array<{ file: string; text: string }>} the text files at or under path (relative to the root) */
function textFiles(path) {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  if (statSync(full).isDirectory()) {
    return readdirSync(full)
      .filter((name) => !SKIPPED.has(name))
      .flatMap((name) => textFiles(join(path, name)));
  }
  const text = readFileSync(full, 'utf8');
  return text.includes('\0') ? [] : [{ file: path, text }];
}

const config = createRequire(import.meta.url)(join(root, '.dependency-cruiser.cjs'));
/** @type {Array<{ name: string; to: { pathNot?: string | string[] } }>} */
const rules = config.forbidden;
/** @type {(layer: string, file: string) => boolean} the layer's rule lets it import this one file */
const fileExempt = (layer, file) => {
  const pathNot = rules.find((rule) => rule.name === `layer-${layer}`)?.to.pathNot ?? [];
  return [pathNot].flat().some((pattern) => new RegExp(pattern).test(file));
};
const srcFolders = readdirSync(join(root, 'src')).filter((name) => statSync(join(root, 'src', name)).isDirectory());

const tableDifferences = layerTableDifferences(config.LAYERS, readFileSync(join(root, 'docs/architecture.md'), 'utf8'), {
  fileExempt,
  folders: srcFolders,
});
const files = SCANNED.flatMap(textFiles);
const missing = missingNamedPaths(files, (path) => existsSync(join(root, path)));

if (tableDifferences.length > 0) {
  console.error(
    `docs/architecture.md's layer table and the LAYERS of .dependency-cruiser.cjs disagree (the rules are what lint enforces):`,
  );
  for (const line of tableDifferences) console.error(`  ${line}`);
}
if (missing.length > 0) {
  console.error('Paths named in comments or docs that do not exist (name where that code lives now):');
  for (const line of missing) console.error(`  ${line}`);
}
if (tableDifferences.length > 0 || missing.length > 0) process.exit(1);
