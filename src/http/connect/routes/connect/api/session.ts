/** `GET /connect/api/session`: what the page shows for its session, once the origins that frame it are allowed. */
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { describeSessionForUi } from '../../../../../connect/session-view.js';
import { parse } from '../../../../errors.js';
import { assertEmbeddersAllowed } from '../../../embedding.js';
import { sessionOf, wrap, type ConnectHttp } from '../../connect-http.js';

/**
 * `embedder`: the origins that framed (parent first, then the frames above it where the browser
 * tells) or opened the Nango-protocol page; given, each must be allowed by the session's Environment.
 */
const SessionQuery = z.looseObject({
  embedder: z.union([z.string().max(512), z.array(z.string().max(512)).min(1).max(16)]).optional(),
});

export function sessionRoute(http: ConnectHttp): RequestHandler {
  const { deps } = http;
  return wrap((req, res) => {
    const session = sessionOf(deps, req);
    const embedders = [parse(SessionQuery, req.query, 'query').embedder ?? []].flat();
    if (embedders.length) assertEmbeddersAllowed(deps.catalog, session.namespace, embedders);
    res.set('cache-control', 'no-store').json({ data: describeSessionForUi(deps, session, http.lookOf(req).lang) });
  });
}
