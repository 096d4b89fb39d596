/**
 * Renders the figures the fault tests wrote (test-results/reliability/*.json) into docs/reliability.md:
 * `npm run build && node dist/test/support/faults/render-reliability.js` after a run of test/faults.
 * Rows (and notes) of scenarios that have no figures in test-results are kept as the document has them,
 * so a run of one fault test re-renders its own rows only; a row is the same scenario's when its title is
 * the same but for the numbers in it (the grants scenario names its counts).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../../dev/control-plane.js';
import { RELIABILITY_DIR, type ScenarioFigures } from './reliability-report.js';

const scenarios = readdirSync(RELIABILITY_DIR)
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(join(RELIABILITY_DIR, f), 'utf8')) as ScenarioFigures & { at: string })
  .sort((a, b) => a.scenario.localeCompare(b.scenario));
const fmt = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ') || '—';
const rows = scenarios.map((s) =>
  [
    s.title,
    fmt(s.faults),
    s.survived ? 'yes' : 'no',
    fmt(s.counts),
    s.grantsLost ?? '—',
    s.webhooksLost ?? '—',
    s.duplicates?.length ? s.duplicates.map((d) => `\`${d.webhookId}\` ×${d.times}`).join('<br>') : '0',
    s.takeoverMs === undefined ? '—' : `${(s.takeoverMs / 1000).toFixed(1)} s`,
    s.at.slice(0, 16).replace('T', ' '),
  ].join(' | '),
);

const path = join(REPO_ROOT, 'docs', 'reliability.md');
const doc = readFileSync(path, 'utf8');
const start = '<!-- figures:start -->';
const end = '<!-- figures:end -->';

// The rows and notes already in the document: a measured scenario's replace its own where they are
// (the same title but for its numbers), the others stay; a scenario new to the document comes last.
const shape = (title: string) => title.replace(/\d+/g, '#');
const previous = doc.slice(doc.indexOf(start) + start.length, doc.indexOf(end)).split('\n');
const titleOfRow = (line: string) => line.slice(2, line.indexOf(' | '));
const measuredAs = (title: string) => scenarios.findIndex((s) => shape(s.title) === shape(title));
const previousRows = previous.filter((l) => l.startsWith('| ') && !l.startsWith('| scenario |'));
const previousTitles = previousRows.map(titleOfRow);
const placed = new Set<number>();
const allRows: string[] = [];
let keptRows = 0;
for (const line of previousRows) {
  const i = measuredAs(titleOfRow(line));
  if (i < 0) {
    keptRows++;
    allRows.push(line.slice(2, -2));
  } else if (!placed.has(i)) {
    placed.add(i);
    allRows.push(rows[i]!);
  }
}
scenarios.forEach((_, i) => placed.has(i) || allRows.push(rows[i]!));
const notesOf = (i: number) => (scenarios[i]!.notes ?? []).map((n) => `- ${scenarios[i]!.title}: ${n}`);
const notesPlaced = new Set<number>();
const allNotes: string[] = [];
for (const line of previous.filter((l) => l.startsWith('- '))) {
  const title = previousTitles.find((t) => line.startsWith(`- ${t}: `));
  const i = title === undefined ? -1 : measuredAs(title);
  if (i < 0) allNotes.push(line);
  else if (!notesPlaced.has(i)) {
    notesPlaced.add(i);
    allNotes.push(...notesOf(i));
  }
}
scenarios.forEach((_, i) => notesPlaced.has(i) || allNotes.push(...notesOf(i)));

const generated = [
  '| scenario | faults injected | assertions held | counted at the peers | grants lost | webhooks lost | duplicates (webhook-id) | take-over after the fault | run (UTC) |',
  '|---|---|---|---|---|---|---|---|---|',
  ...allRows.map((r) => `| ${r} |`),
  '',
  ...allNotes,
].join('\n');
writeFileSync(path, `${doc.slice(0, doc.indexOf(start) + start.length)}\n${generated}\n${doc.slice(doc.indexOf(end))}`);
process.stdout.write(`docs/reliability.md: ${scenarios.length} scenarios rendered, ${keptRows} rows kept from the document\n`);
