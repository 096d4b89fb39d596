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
  const json = existsSync(FIGURES) ? (JSON.parse(readFileSync(FIGURES, 'utf8')) as Record<string, unknown>) : {};
  json[section] = { ...figures, date: new Date().toISOString(), loadAverage: loadavg() };
  writeFileSync(FIGURES, `${JSON.stringify(json, null, 2)}\n`);
}
