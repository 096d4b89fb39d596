/** `GET /dashboard`, `/dashboard/dashboard.js`, `/dashboard/dashboard.css`: the page, its script and its stylesheet. */
import { readFileSync } from 'node:fs';
import type { RequestHandler } from 'express';
import { DASHBOARD_CSS, dashboardPage } from '../../page.js';
import { HEADERS } from '../headers.js';

function asset(relative: string): () => string {
  let cached: string | undefined;
  return () => (cached ??= readFileSync(new URL(relative, import.meta.url), 'utf8').replace(/\n\/\/# sourceMappingURL=.*$/m, '\n'));
}
const script = asset('../../../../browser/dashboard.js');

export function pageRoute(basePath: string): RequestHandler {
  return (_req, res) => {
    res.set({ ...HEADERS, 'content-type': 'text/html; charset=utf-8' }).send(dashboardPage(basePath));
  };
}

export const scriptRoute: RequestHandler = (_req, res) => {
  res.set({ ...HEADERS, 'content-type': 'text/javascript; charset=utf-8' }).send(script());
};

export const stylesheetRoute: RequestHandler = (_req, res) => {
  res.set({ ...HEADERS, 'content-type': 'text/css; charset=utf-8' }).send(DASHBOARD_CSS);
};
