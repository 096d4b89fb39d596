/**
 * Renders the figures the fault tests wrote (test-results/reliability/*.json) into docs/reliability.md:
 * `npm run build && node dist/test/support/faults/render-reliability.js` after a run of test/faults.
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
const notes = scenarios.flatMap((s) => (s.notes ?? []).map((n) => `- ${s.title}: ${n}`));
const generated = [
  '| scenario | faults injected | assertions held | counted at the peers | grants lost | webhooks lost | duplicates (webhook-id) | take-over after the fault | run (UTC) |',
  '|---|---|---|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r} |`),
  '',
  ...notes,
].join('\n');

const path = join(REPO_ROOT, 'docs', 'reliability.md');
const doc = readFileSync(path, 'utf8');
const start = '<!-- figures:start -->';
const end = '<!-- figures:end -->';
writeFileSync(path, `${doc.slice(0, doc.indexOf(start) + start.length)}\n${generated}\n${doc.slice(doc.indexOf(end))}`);
process.stdout.write(`docs/reliability.md: ${scenarios.length} scenarios\n`);
