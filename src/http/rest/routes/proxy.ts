/**
 * `ANY /proxy/{path}`: the credential-injecting proxy (src/proxy). Not an express route: the
 * server's request listener hands every request under `/proxy` to it before express sees the
 * request (src/http/hot-routes.ts), after the secret key's check; the body is streamed to the
 * provider untouched.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { AppContext } from '../../../context/app-context.js';
import type { ResolvedEnvironment } from '../../../auth/environment-keys.js';
import { CredentialProxy, type ProxyTokenRefresher } from '../../../proxy/credential-proxy.js';
import { connectionObjectName } from '../../../k8s/names.js';
import { HandshakeWindows } from '../../../k8s/handshake-windows.js';
import { LatchkeyError } from '../../../domain/errors.js';
import { parse, statusOf } from '../../errors.js';
import { ConnectionId, IntegrationId } from '../schemas/common.js';
import { proxyAccess } from '../../access-table.js';

const ProxyHeaders = z.object({
  'connection-id': ConnectionId,
  'provider-config-key': IntegrationId,
});

export interface ProxyRouteContext extends AppContext {
  /** The shared token refresher; without it tokens are used as stored. */
  refresher?: ProxyTokenRefresher;
}

/**
 * Proxies one request of an authenticated caller. Rejects with the error to answer when it
 * answered nothing itself; a caller that went away gets nothing (its socket is destroyed).
 */
export type ProxyRequestHandler = (req: IncomingMessage, res: ServerResponse, environment: ResolvedEnvironment) => Promise<void>;

export function proxyHandler(ctx: ProxyRouteContext): ProxyRequestHandler {
  const proxy = new CredentialProxy({
    connections: ctx.connections,
    catalog: ctx.catalog,
    logger: ctx.logger,
    metrics: ctx.metrics,
    clock: ctx.clock,
    egress: ctx.egress,
    refresher: ctx.refresher,
    statusOf,
    idleTimeoutMs: ctx.config.proxyIdleSeconds * 1000,
    streamMaxMs: ctx.config.proxyStreamMaxSeconds * 1000,
    handshakeWindows: new HandshakeWindows(ctx.caches),
  });
  return async (req, res, environment) => {
    const startedAt = ctx.clock.now();
    // The raw path and query as received: a decoded path would hide encoded tricks.
    const raw = req.url ?? '/proxy';
    const q = raw.indexOf('?');
    // The path after `/proxy`, still percent-encoded.
    const rawPath = (q === -1 ? raw : raw.slice(0, q)).replace(/^\/proxy/i, '');
    try {
      // A Kubernetes token is reviewed before the request is read (a 401 before a 400, as with the secret key).
      const reviewing = environment.serviceAccount?.authenticate();
      if (reviewing) await reviewing;
      // The two headers only: the others are the provider's business (node decodes header values as
      // latin1, so there is no lone surrogate for the shape check to find in them anyway).
      const headers = parse(
        ProxyHeaders,
        { 'connection-id': req.headers['connection-id'], 'provider-config-key': req.headers['provider-config-key'] },
        'headers',
      );
      // A ServiceAccount's call: RBAC decides before anything is sent (the secret key needs no check).
      const authorizing = environment.serviceAccount?.authorize(proxyAccess(headers['provider-config-key'], headers['connection-id']));
      if (authorizing) await authorizing;
      await proxy.handle(req, res, {
        namespace: environment.namespace,
        connectionId: headers['connection-id'],
        providerConfigKey: headers['provider-config-key'],
        rawPath,
        rawQuery: q === -1 ? '' : raw.slice(q + 1),
      });
    } catch (err) {
      // The caller went away: there is no one to answer.
      if (err instanceof LatchkeyError && err.kind === 'cancelled') {
        res.destroy();
        return;
      }
      // RBAC's refusals have their own entries (operation `access`); a refused token has none.
      if (err instanceof LatchkeyError && err.code !== 'forbidden' && err.code !== 'invalid_token')
        logProxyFailure(ctx, req, environment, rawPath, err, ctx.clock.now() - startedAt);
      throw err;
    }
  };
}

/** A proxied call that Latchkey could not make (the provider's own error answers pass through and are not entries). */
function logProxyFailure(
  ctx: AppContext,
  req: IncomingMessage,
  environment: ResolvedEnvironment,
  rawPath: string,
  err: LatchkeyError,
  durationMs: number,
): void {
  const connectionId = req.headers['connection-id'];
  const integration = req.headers['provider-config-key'];
  const known = typeof connectionId === 'string' && typeof integration === 'string' && connectionId && integration;
  ctx.oplog?.record({
    namespace: environment.namespace,
    operation: 'proxy',
    outcome: 'failure',
    step: req.method,
    ...(known ? { integration, connectionId, connection: { name: connectionObjectName(integration, connectionId) } } : {}),
    durationMs,
    // The path only: a query string may carry the caller's own secrets.
    messages: [`${req.method} ${rawPath.slice(0, 200)}: ${statusOf(err)} ${err.code}: ${err.message}`],
  });
}
