/**
 * docs/benchmarks.json: the benchmarks' figures as data, one section per benchmark, each with the
 * date and load average of its run (several benchmarks write the same file with this contract).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../dev/control-plane.js';

const FIGURES = join(REPO_ROOT, 'docs/benchmarks.json');

export function writeFigures(section: string, figures: Record<string, unknown>): void {
  const json = existsSync(FIGURES) ? (JSON.parse(readFileSync(FIGURES, 'utf8')) as Record<string, unknown>) : {};
  json[section] = { ...figures, date: new Date().toISOString(), loadAverage: loadavg() };
  writeFileSync(FIGURES, `${JSON.stringify(json, null, 2)}\n`);
}
