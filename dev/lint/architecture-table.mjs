// @ts-check
// The layer table of docs/architecture.md against the LAYERS map of .dependency-cruiser.cjs: the map
// is what lint enforces, the table what people read. Plain JavaScript, so lint runs it before any
// build (dev/lint/check-docs.mjs); no I/O here, the caller reads the files.

/** The folder the rules give no layer of its own: it wires the components and may import anything. */
const WIRING = 'app';
/** How the table says a layer imports no folder of ours. */
const NOTHING = 'nothing of ours';

/**
 * The rows of the `| folder | job | may import |` tables whose folder is `src/<name>`: name to its
 * "may import" cell, as written.
 * @param {string} markdown
 * @returns {Array<{ folder: string; mayImport: string }>}
 */
export function layerTableRows(markdown) {
  /** @type {Array<{ folder: string; mayImport: string }>} */
  const rows = [];
  let inTable = false;
  for (const line of markdown.split('\n')) {
    const cells = line.trim().startsWith('|')
      ? line
          .trim()
          .replace(/^\||\|$/g, '')
          .split('|')
      : undefined;
    if (!cells) {
      inTable = false;
      continue;
    }
    if (cells.map((c) => c.trim()).join('|') === 'folder|job|may import') {
      inTable = true;
      continue;
    }
    const folder = /^`src\/([^`/]+)\/?`$/.exec(cells[0].trim());
    if (inTable && folder && cells.length >= 3) rows.push({ folder: folder[1], mayImport: cells[cells.length - 1].trim() });
  }
  return rows;
}

/**
 * A "may import" cell read as the folders and single files it names: `domain, k8s`; `nothing of
 * ours`; `` `connect/wire.ts` (types only) `` (a file, with a note in parentheses).
 * @param {string} cell
 * @returns {{ folders: string[]; files: string[] }}
 */
export function parseMayImport(cell) {
  const text = cell.replace(/\([^)]*\)/g, '').trim();
  if (text === NOTHING) return { folders: [], files: [] };
  const items = text
    .split(',')
    .map((item) => item.replace(/`/g, '').trim())
    .filter((item) => item !== '');
  return { folders: items.filter((item) => !item.includes('/')), files: items.filter((item) => item.includes('/')) };
}

/**
 * Every way the table and the rules disagree, one line each; empty when they agree.
 * @param {Record<string, string[]>} layers LAYERS: each layer and the layers it may import besides itself
 * @param {string} markdown docs/architecture.md
 * @param {{
 *   fileExempt?: (layer: string, file: string) => boolean;
 *   folders?: string[];
 * }} [options] fileExempt: whether the rules let `layer` import that one file (`src/connect/wire.ts`)
 *   of a layer it may not import; folders: the folders that exist under src/
 * @returns {string[]}
 */
export function layerTableDifferences(layers, markdown, options = {}) {
  /** @type {string[]} */
  const differences = [];
  const rows = layerTableRows(markdown);
  if (rows.length === 0) return ['docs/architecture.md: no `| folder | job | may import |` table with `src/...` rows'];
  const known = new Set([...Object.keys(layers), WIRING]);
  const seen = new Set();
  for (const { folder, mayImport } of rows) {
    if (seen.has(folder)) differences.push(`src/${folder}: the table has two rows for it`);
    seen.add(folder);
    if (folder === WIRING) continue;
    const allowed = layers[folder];
    if (!allowed) {
      differences.push(`src/${folder}: a row in the table, but no layer in the rules (LAYERS)`);
      continue;
    }
    const listed = parseMayImport(mayImport);
    for (const name of allowed) {
      if (!listed.folders.includes(name)) differences.push(`src/${folder}: the rules allow importing ${name}; the table does not list it`);
    }
    for (const name of listed.folders) {
      if (!known.has(name)) differences.push(`src/${folder}: the table lists "${name}", which is no folder of the rules`);
      else if (!allowed.includes(name)) differences.push(`src/${folder}: the table lists ${name}; the rules do not allow it`);
    }
    for (const file of listed.files) {
      const owner = file.split('/')[0];
      if (!allowed.includes(owner) && !options.fileExempt?.(folder, `src/${file}`)) {
        differences.push(`src/${folder}: the table lists ${file}; the rules do not allow it`);
      }
    }
  }
  for (const layer of Object.keys(layers)) {
    if (!seen.has(layer)) differences.push(`src/${layer}: a layer in the rules (LAYERS), but no row in the table`);
  }
  if (!seen.has(WIRING)) differences.push(`src/${WIRING}: the folder that wires the components has no row in the table`);
  for (const folder of options.folders ?? []) {
    if (!known.has(folder)) differences.push(`src/${folder}: a folder of src/ that the rules (LAYERS) do not name`);
  }
  return differences;
}
