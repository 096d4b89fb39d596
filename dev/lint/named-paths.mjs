// @ts-check
// Paths of our own source files named in comments and docs, and which of them no longer exist: a
// moved module leaves its old path behind in every comment that cited it. No I/O here; the caller
// (dev/lint/check-docs.mjs) reads the files and says what exists.

// A path from the repository root into one of our source folders, ending in a source extension, or
// to a document under docs/. Not part of a longer path (dist/src/..., node_modules/x/src/...) and not
// a template (`test/${name}.ts`).
const NAMED_PATH = /(?<![\w/.@$-])((?:src|dev|test|bench)\/[\w/.-]*[\w-]\.(?:ts|mts|cts|mjs|cjs)|docs\/[\w/.-]*[\w-]\.md)(?!\w)/g;

/**
 * The source paths a text names, with the line (from 1) of each.
 * @param {string} text
 * @returns {Array<{ path: string; line: number }>}
 */
export function namedSourcePaths(text) {
  /** @type {Array<{ path: string; line: number }>} */
  const found = [];
  text.split('\n').forEach((content, index) => {
    for (const match of content.matchAll(NAMED_PATH)) found.push({ path: match[1], line: index + 1 });
  });
  return found;
}

/**
 * One line per named path that does not exist: `file:line: names path, which does not exist`.
 * @param {Array<{ file: string; text: string }>} files
 * @param {(path: string) => boolean} exists
 * @returns {string[]}
 */
export function missingNamedPaths(files, exists) {
  /** @type {string[]} */
  const missing = [];
  for (const { file, text } of files) {
    for (const { path, line } of namedSourcePaths(text)) {
      if (!exists(path)) missing.push(`${file}:${line}: names ${path}, which does not exist`);
    }
  }
  return missing;
}
