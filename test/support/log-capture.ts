/**
 * A pino logger at `debug` that keeps every line in memory, so a test can scan what a replica really
 * logged (messages, error messages, stack traces) for secret values. Pass `logger` to startReplica.
 */
import { createLogger, type Logger } from '../../src/app/log.js';

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
