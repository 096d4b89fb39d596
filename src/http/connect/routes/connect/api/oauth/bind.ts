/**
 * `POST /connect/api/oauth/bind`: sets the binding cookie in a first-party context (the embedded UI's
 * sign-in popup). It needs the session token in a header, so no link or cross-site form can plant a
 * binding in another browser.
 */
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { parse } from '../../../../../errors.js';
import { sessionOf, wrap, type ConnectHttp } from '../../../connect-http.js';

const BindBody = z.strictObject({ binding: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be the binding from oauth/start') });

export function oauthBindRoute(http: ConnectHttp): RequestHandler {
  return wrap((req, res) => {
    const session = sessionOf(http.deps, req);
    const body = parse(BindBody, req.body, 'body');
    http.setBinding(res, session, body.binding);
    http.keepLook(req, res);
    res.set('cache-control', 'no-store').json({ data: { bound: true } });
  });
}
