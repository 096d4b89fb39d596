/**
 * HTTP routes of the Connect UI (public: the end user's browser has a session token, never the
 * secret key): the page and its script, the frontend client module, the small JSON API the page
 * calls with `Authorization: Bearer <session token>`, and the OAuth callback. The wiring only: one
 * file per route (or small group), in folders that mirror the URL.
 */
import express, { type Router } from 'express';
import type { ConnectDeps } from '../../../connect/flows.js';
import { connectHttp } from './connect-http.js';
import { connectPageRoute, embedPageRoute, redirectPageRoute } from './connect/pages.js';
import { logoRoute } from './connect/logos/file.js';
import { clientScriptRoute, clientTypesRoute, pageScriptRoute } from './connect/scripts.js';
import { sessionRoute } from './connect/api/session.js';
import { oauthStartRoute } from './connect/api/oauth/start.js';
import { oauthBindRoute } from './connect/api/oauth/bind.js';
import { oauthChooseRoute } from './connect/api/oauth/choose.js';
import { formsRoute } from './connect/api/forms.js';
import { clientDocumentRoute } from './connect/clients/document.js';
import { callbackForm, getCallbackRoute, postCallbackRoute } from './oauth/callback.js';

export function connectRoutes(deps: ConnectDeps): Router {
  const router = express.Router();
  const http = connectHttp(deps);
  router.get('/connect', connectPageRoute(http));
  router.get('/connect/embed', embedPageRoute(http));
  router.get('/connect/redirect', redirectPageRoute(http));
  router.get('/connect/logos/:file', logoRoute);
  router.get('/connect/ui.js', pageScriptRoute);
  router.get('/connect/client.js', clientScriptRoute);
  router.get('/connect/client.d.ts', clientTypesRoute);
  router.get('/connect/api/session', sessionRoute(http));
  router.post('/connect/api/oauth/start', http.json, oauthStartRoute(http));
  router.post('/connect/api/oauth/bind', http.json, oauthBindRoute(http));
  router.post('/connect/api/oauth/choose', http.json, oauthChooseRoute(http));
  router.post('/connect/api/forms', http.json, formsRoute(http));
  router.get('/connect/clients/:namespace/:integration', clientDocumentRoute(http));
  router.post('/oauth/callback', callbackForm, postCallbackRoute(http));
  router.get('/oauth/callback', getCallbackRoute(http));
  return router;
}
