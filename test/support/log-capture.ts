/**
 * A pino logger at `debug` that keeps every line in memory, so a test can scan what a replica really
 * logged (messages, error messages, stack traces) for secret values. Pass `logger` to startReplica.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger, type Logger } from '../../src/platform/log.js';
import { REPO_ROOT } from '../../dev/control-plane.js';

export interface LogCapture {
  logger: Logger;
  /** Every line written so far, as pino serialised it. */
  lines: string[];
  /** The lines that contain any of the given values, with the value found (never empty values). */
  leaks(secrets: Iterable<string>): Array<{ secret: string; line: string }>;
}

export function captureLogs(): LogCapture {
  const lines: string[] = [];
  const logger = createLogger('debug', {}, { write: (s: string) => void lines.push(s) });
  return {
    logger,
    lines,
    leaks(secrets) {
      const found: Array<{ secret: string; line: string }> = [];
      for (const secret of new Set(secrets)) {
        if (!secret) continue;
        for (const line of lines) if (line.includes(secret)) found.push({ secret, line });
      }
      return found;
    },
  };
}

/**
 * What to look for, per secret value (value → its kind): the value as it is, URL-encoded and
 * JSON-escaped; a value of 32 characters or more also by its last 16 characters (a truncated or
 * partly masked value still leaks its random part), and with `prefixes` by its first 16 too (a value
 * cut short after its start). Returns needle → kind.
 */
export function needlesOf(secrets: Map<string, string>, opts: { prefixes?: boolean } = {}): Map<string, string> {
  const needles = new Map<string, string>();
  for (const [value, kind] of secrets) {
    for (const form of [value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1)]) needles.set(form, kind);
    if (value.length >= 32) needles.set(value.slice(-16), `${kind} (its last 16 characters)`);
    if (value.length >= 32 && opts.prefixes) needles.set(value.slice(0, 16), `${kind} (its first 16 characters)`);
  }
  return needles;
}

/**
 * Writes a scan's figures to `test-results/<name>.json` (time, lines, secret values and their count
 * by kind, then `figures`, the leaks among them) and the lines themselves to
 * `test-results/<name>.lines.jsonl`, to read what was scanned (test values only; test-results/ is not
 * committed).
 */
export function writeScanResults(name: string, logs: LogCapture, secrets: Map<string, string>, figures: Record<string, unknown>): void {
  const byKind: Record<string, number> = {};
  for (const kind of secrets.values()) byKind[kind] = (byKind[kind] ?? 0) + 1;
  const dir = join(REPO_ROOT, 'test-results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.lines.jsonl`), logs.lines.join(''));
  const summary = { at: new Date().toISOString(), lines: logs.lines.length, secretValues: secrets.size, byKind, ...figures };
  writeFileSync(join(dir, `${name}.json`), JSON.stringify(summary, null, 2));
}
