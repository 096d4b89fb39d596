/**
 * `ANY /proxy/{path}`: the credential-injecting proxy (src/proxy). Registered behind the secret key
 * and before the JSON body parser, because the body is streamed to the provider untouched.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../../app/context.js';
import { CredentialProxy, type ProxyTokenRefresher } from '../../../proxy/credential-proxy.js';
import { connectionObjectName } from '../../../k8s/names.js';
import { environmentOf } from '../../secret-key-auth.js';
import { LatchkeyError } from '../../../domain/errors.js';
import { parse, statusOf } from '../../errors.js';
import { ConnectionId, IntegrationId } from '../schemas/common.js';

const ProxyHeaders = z.object({
  'connection-id': ConnectionId,
  'provider-config-key': IntegrationId,
});

export interface ProxyRouteContext extends AppContext {
  /** The shared token refresher; without it tokens are used as stored. */
  refresher?: ProxyTokenRefresher;
}

/**
 * The proxy's express handler, for every method under `/proxy` (after the secret key's check). It
 * reads the raw path from `req.originalUrl`, so it works mounted at `/proxy` or called for the whole
 * URL (src/http/hot-routes.ts).
 */
export function proxyHandler(ctx: ProxyRouteContext): RequestHandler {
  const proxy = new CredentialProxy({
    store: ctx.store,
    logger: ctx.logger,
    metrics: ctx.metrics,
    clock: ctx.clock,
    egress: ctx.egress,
    refresher: ctx.refresher,
    statusOf,
  });
  return async (req: Request, res: Response, next: NextFunction) => {
    const startedAt = ctx.clock.now();
    try {
      // The two headers only: the others are the provider's business (node decodes header values as
      // latin1, so there is no lone surrogate for the shape check to find in them anyway).
      const headers = parse(
        ProxyHeaders,
        { 'connection-id': req.headers['connection-id'], 'provider-config-key': req.headers['provider-config-key'] },
        'headers',
      );
      // The raw path and query as received: express's decoded params would hide encoded tricks.
      const raw = req.originalUrl;
      const q = raw.indexOf('?');
      const pathPart = q === -1 ? raw : raw.slice(0, q);
      await proxy.handle(req, res, {
        namespace: environmentOf(res).namespace,
        connectionId: headers['connection-id'],
        providerConfigKey: headers['provider-config-key'],
        rawPath: pathPart.replace(/^\/proxy/i, ''),
        rawQuery: q === -1 ? '' : raw.slice(q + 1),
      });
    } catch (err) {
      // The caller went away: there is no one to answer.
      if (err instanceof LatchkeyError && err.kind === 'cancelled') {
        res.destroy();
        return;
      }
      if (err instanceof LatchkeyError) {
        logProxyFailure(ctx, req, res, err, ctx.clock.now() - startedAt);
        next(err);
        return;
      }
      next(err);
    }
  };
}

/** A proxied call that Latchkey could not make (the provider's own error answers pass through and are not entries). */
function logProxyFailure(ctx: AppContext, req: Request, res: Response, err: LatchkeyError, durationMs: number): void {
  const connectionId = req.headers['connection-id'];
  const integration = req.headers['provider-config-key'];
  const known = typeof connectionId === 'string' && typeof integration === 'string' && connectionId && integration;
  ctx.oplog?.record({
    namespace: environmentOf(res).namespace,
    operation: 'proxy',
    outcome: 'failure',
    step: req.method,
    ...(known ? { integration, connectionId, connection: { name: connectionObjectName(integration, connectionId) } } : {}),
    durationMs,
    // The path only: a query string may carry the caller's own secrets.
    messages: [`${req.method} ${req.path.replace(/^\/proxy/i, '').slice(0, 200)}: ${statusOf(err)} ${err.code}: ${err.message}`],
  });
}
