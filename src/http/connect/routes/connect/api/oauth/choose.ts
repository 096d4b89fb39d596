/**
 * `POST /connect/api/oauth/choose`: the end user's choice among the accounts one grant covers, sent by
 * the callback's choice page (`{choice, account}`). No session token: the sealed choice handle and the
 * browser's binding cookie (SameSite=Lax: a cross-site post lacks it) stand for the flow.
 */
import type { RequestHandler } from 'express';
import { completeAccountChoice } from '../../../../../../connect/flows.js';
import { readBinding } from '../../../../flow-cookie.js';
import { wrap, type ConnectHttp } from '../../../connect-http.js';

export function oauthChooseRoute(http: ConnectHttp): RequestHandler {
  const { deps } = http;
  return wrap(async (req, res) => {
    const outcome = await completeAccountChoice(deps, req.body, readBinding(http.cookieOf(), req));
    res.set('cache-control', 'no-store');
    if (outcome.choice) {
      res.json({ data: { choice: outcome.choice } });
      return;
    }
    const result = outcome.result!;
    const integration = outcome.namespace ? deps.catalog.getIntegration(outcome.namespace, result.providerConfigKey) : undefined;
    const provider = integration && deps.catalog.getProvider(integration.spec.provider);
    res.json({
      data: {
        providerConfigKey: result.providerConfigKey,
        ...(result.connectionId ? { connectionId: result.connectionId } : {}),
        name: integration?.spec.displayName ?? provider?.spec.displayName ?? result.providerConfigKey,
      },
    });
  });
}
