/** `GET /connect/ui.js`, `/connect/client.js`, `/connect/client.d.ts`: the page's script and the frontend client module. */
import { readFileSync } from 'node:fs';
import type { RequestHandler } from 'express';

/** Compiled browser assets, read once from dist (src/browser's output, beside this module's). */
function asset(relative: string): () => string {
  let cached: string | undefined;
  return () => (cached ??= readFileSync(new URL(relative, import.meta.url), 'utf8').replace(/\n\/\/# sourceMappingURL=.*$/m, '\n'));
}
const pageScript = asset('../../../../browser/connect-page.js');
const clientScript = asset('../../../../browser/connect-client.js');
const clientTypes = asset('../../../../browser/connect-client.d.ts');

export const pageScriptRoute: RequestHandler = (_req, res) => {
  res
    .set({ 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' })
    .send(pageScript());
};

/** The frontend client is imported by the application's own pages: any origin may load it. */
export const clientScriptRoute: RequestHandler = (_req, res) => {
  res
    .set({
      'content-type': 'text/javascript; charset=utf-8',
      'access-control-allow-origin': '*',
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
    })
    .send(clientScript());
};

export const clientTypesRoute: RequestHandler = (_req, res) => {
  res.set({ 'content-type': 'text/plain; charset=utf-8', 'access-control-allow-origin': '*' }).send(clientTypes());
};
