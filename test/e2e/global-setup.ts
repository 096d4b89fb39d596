/**
 * The e2e suite's global setup (jest.e2e.config.js): builds the image once for all its files, as
 * `npm run image` does (dev/image/build.sh, at its default tag), and hands its name to them in
 * LATCHKEY_E2E_IMAGE. Where the local node cannot start, nothing is built: every file reports itself
 * skipped with the reason.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../../dev/control-plane.js';
import { whyNodeCannotStart } from '../../dev/local-node.js';

export default function globalSetup(): void {
  if (whyNodeCannotStart()) return;
  // The default tag, as a reader's `npm run image` builds it (docs/install.md names it).
  const { LATCHKEY_IMAGE: _ignored, ...env } = process.env;
  const out = execFileSync('bash', [join(REPO_ROOT, 'dev/image/build.sh')], {
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 1_200_000,
  });
  process.env.LATCHKEY_E2E_IMAGE = out.trim().split('\n').pop();
}

/** The image the global setup built (its name as `npm run image` printed it). */
export function e2eImage(): string {
  const image = process.env.LATCHKEY_E2E_IMAGE;
  if (!image)
    throw new Error('LATCHKEY_E2E_IMAGE is not set: run the e2e suite with jest.e2e.config.js, whose global setup builds the image');
  return image;
}
