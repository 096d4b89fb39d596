/**
 * The figures a fault test measured, written as JSON under test-results/reliability/ (one file per
 * scenario); `node dist/test/support/faults/render-reliability.js` renders them into docs/reliability.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../../dev/control-plane.js';

export interface ScenarioFigures {
  /** Stable key (the file name). */
  scenario: string;
  title: string;
  /** Faults injected, by kind, and whether the test's assertions held afterwards. */
  faults: Record<string, number>;
  survived: boolean;
  /** Counted at the peers (webhook receiver, oidc-provider). */
  counts: Record<string, number>;
  grantsLost?: number;
  webhooksLost?: number;
  /** Duplicates seen at the receiver, with their webhook-id. */
  duplicates?: Array<{ webhookId: string; times: number }>;
  /** Milliseconds from the kill (or cut) to the new owner starting. */
  takeoverMs?: number;
  notes?: string[];
}

export const RELIABILITY_DIR = join(REPO_ROOT, 'test-results', 'reliability');

export function writeScenario(figures: ScenarioFigures): void {
  mkdirSync(RELIABILITY_DIR, { recursive: true });
  writeFileSync(join(RELIABILITY_DIR, `${figures.scenario}.json`), JSON.stringify({ ...figures, at: new Date().toISOString() }, null, 2));
}
