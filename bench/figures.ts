/**
 * The machine-readable side of docs/benchmarks.md: each benchmark writes its figures under its own
 * key of docs/benchmarks.json, with when it ran and how busy the machine was, keeping the others.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../dev/repo-root.js';

const FIGURES = join(REPO_ROOT, 'docs/benchmarks.json');

export function writeFigures(section: string, figures: Record<string, unknown>): void {
  const json = existsSync(FIGURES) ? (JSON.parse(readFileSync(FIGURES, 'utf8')) as Record<string, unknown>) : {};
  json[section] = { ...figures, date: new Date().toISOString(), loadAverage: loadavg() };
  writeFileSync(FIGURES, `${JSON.stringify(json, null, 2)}\n`);
}
