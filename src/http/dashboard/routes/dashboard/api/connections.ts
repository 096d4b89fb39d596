/** `GET /dashboard/api/connections`: connections searched, by state and integration, a page at a time (no credential). */
import type { RequestHandler } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../../../../context/app-context.js';
import { parse } from '../../../../errors.js';
import { environmentOf } from '../../../../secret-key-auth.js';
import { searchConnections, STATES } from '../../../views.js';

const ConnectionsQuery = z.strictObject({
  search: z.string().max(320).optional(),
  integration: z.string().max(63).optional(),
  state: z.enum(STATES).optional(),
  cursor: z.string().max(1024).optional(),
  limit: z.coerce.number().int().min(1).max(200).optional(),
});

export function connectionsRoute(ctx: AppContext): RequestHandler {
  return async (req, res, next) => {
    try {
      const q = parse(ConnectionsQuery, { ...(req.query as object) }, 'query');
      res.json(await searchConnections(ctx.connectionScans, environmentOf(res).namespace, { ...q, limit: q.limit ?? 25 }, ctx.clock.now()));
    } catch (err) {
      next(err);
    }
  };
}
