/** `POST /dashboard/api/connection/refresh`: a refresh forced, answered with the connection's detail. */
import type { RequestHandler } from 'express';
import { RefreshError, UNKNOWN_CONNECTION } from '../../../../../../auth/refresh/token-refresher.js';
import { unknownConnection } from '../../../../../../connections/errors.js';
import { hasCode } from '../../../../../../domain/errors.js';
import { parse } from '../../../../../errors.js';
import { refreshFailure } from '../../../../../rest/routes/connections/refresh-failure.js';
import type { RestDeps } from '../../../../../rest/routes/deps.js';
import { environmentOf } from '../../../../../secret-key-auth.js';
import { connectionDetail } from '../../../../views.js';
import { ConnectionRef } from '../connection-ref.js';

export function refreshRoute(deps: RestDeps): RequestHandler {
  return async (req, res, next) => {
    try {
      const b = parse(ConnectionRef, req.body, 'body');
      const namespace = environmentOf(res).namespace;
      try {
        const conn = await deps.refresher.ensureFresh(namespace, b.integration, b.connection_id, { force: true, reason: 'fetch' });
        res.json(connectionDetail(conn, deps.clock.now()));
      } catch (err) {
        if (hasCode(err, UNKNOWN_CONNECTION)) throw unknownConnection(b.connection_id, b.integration);
        if (err instanceof RefreshError) throw refreshFailure(err);
        throw err;
      }
    } catch (err) {
      next(err);
    }
  };
}
