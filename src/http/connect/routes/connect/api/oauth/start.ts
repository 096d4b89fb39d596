/** `POST /connect/api/oauth/start`: an OAuth flow started; answers the provider URL to send the browser to. */
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { newBrowserBinding } from '../../../../../../auth/flow-state.js';
import { startOAuthFlow } from '../../../../../../connect/flows.js';
import { parse } from '../../../../../errors.js';
import { readBinding } from '../../../../flow-cookie.js';
import { sessionOf, wrap, type ConnectHttp } from '../../../connect-http.js';

const StartBody = z.strictObject({
  integration: z.string().min(1).max(63),
  connectionConfig: z.record(z.string(), z.string().max(1024)).optional(),
});

export function oauthStartRoute(http: ConnectHttp): RequestHandler {
  const { deps } = http;
  return wrap(async (req, res) => {
    const session = sessionOf(deps, req);
    const body = parse(StartBody, req.body, 'body');
    // The flow is bound to this browser by a cookie. Where this answer cannot set it (the embedded
    // page: a third-party frame), the sign-in popup sets it through oauth/bind with `binding`.
    const binding = readBinding(http.cookieOf(), req) ?? newBrowserBinding();
    const url = await startOAuthFlow(deps, session, body.integration, body.connectionConfig ?? {}, binding);
    http.setBinding(res, session, binding);
    http.keepLook(req, res);
    res.set('cache-control', 'no-store').json({ data: { url, binding } });
  });
}
