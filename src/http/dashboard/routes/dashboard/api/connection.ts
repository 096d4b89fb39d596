/** `GET /dashboard/api/connection`: one connection's detail (its credentials never in full). */
import type { RequestHandler } from 'express';
import { unknownConnection } from '../../../../../connections/errors.js';
import type { AppContext } from '../../../../../context/app-context.js';
import { parse } from '../../../../errors.js';
import { environmentOf } from '../../../../secret-key-auth.js';
import { connectionDetail } from '../../../views.js';
import { ConnectionRef } from './connection-ref.js';

export function connectionRoute(ctx: AppContext): RequestHandler {
  return async (req, res, next) => {
    try {
      const q = parse(ConnectionRef, { ...(req.query as object) }, 'query');
      const conn = await ctx.connections.findConnection(environmentOf(res).namespace, q.integration, q.connection_id);
      if (!conn) throw unknownConnection(q.connection_id, q.integration);
      res.json(connectionDetail(conn, ctx.clock.now()));
    } catch (err) {
      next(err);
    }
  };
}
