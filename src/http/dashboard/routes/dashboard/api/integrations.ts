/** `GET /dashboard/api/integrations`: the environment's integrations as the dashboard shows them. */
import type { RequestHandler } from 'express';
import type { AppContext } from '../../../../../context/app-context.js';
import { environmentOf } from '../../../../secret-key-auth.js';
import { integrationsView } from '../../../views.js';

export function integrationsRoute(ctx: AppContext): RequestHandler {
  return async (_req, res, next) => {
    try {
      res.json({ integrations: await integrationsView(ctx, environmentOf(res).namespace, ctx.config.publicBaseUrl) });
    } catch (err) {
      next(err);
    }
  };
}
