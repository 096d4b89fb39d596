/**
 * The machine-readable side of docs/benchmarks.md: each benchmark writes its own top-level section
 * of docs/benchmarks.json and keeps the others (several benchmarks, written by different people,
 * share the file with this one contract).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../dev/repo-root.js';

const FIGURES = join(REPO_ROOT, 'docs/benchmarks.json');

/** Replaces `json[section]` with the figures, the date and the load average; other sections are kept. */
export function writeFigures(section: string, figures: Record<string, unknown>): void {
  const json = readFigures();
  json[section] = { ...figures, date: new Date().toISOString(), loadAverage: loadavg() };
  writeFileSync(FIGURES, `${JSON.stringify(json, null, 2)}\n`);
}

/** The figures as they are now (an empty object when there are none yet). */
export function readFigures(): Record<string, unknown> {
  return existsSync(FIGURES) ? (JSON.parse(readFileSync(FIGURES, 'utf8')) as Record<string, unknown>) : {};
}

/**
 * Sets the object at `path` (e.g. `['memory', 'connections', '10000']`) to the figures with the date
 * and the load average, keeping its siblings: a benchmark measured one point at a time keeps the others.
 */
export function mergeFigures(path: [string, ...string[]], figures: Record<string, unknown>): void {
  const json = readFigures();
  let node = json;
  for (const key of path.slice(0, -1)) {
    const child = node[key];
    node = node[key] = child && typeof child === 'object' && !Array.isArray(child) ? (child as Record<string, unknown>) : {};
  }
  node[path[path.length - 1]!] = { ...figures, date: new Date().toISOString(), loadAverage: loadavg() };
  writeFileSync(FIGURES, `${JSON.stringify(json, null, 2)}\n`);
}
