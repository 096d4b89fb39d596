/** `GET /connect/clients/:namespace/:integration`: an MCP_OAUTH2 Integration's Client ID Metadata Document (public). */
import type { RequestHandler } from 'express';
import { clientMetadataDocument } from '../../../../../connect/client-metadata.js';
import { wrap, type ConnectHttp } from '../../connect-http.js';

export function clientDocumentRoute(http: ConnectHttp): RequestHandler {
  const { deps } = http;
  return wrap((req, res) => {
    const document = clientMetadataDocument(deps, String(req.params.namespace), String(req.params.integration));
    // Authorization servers cache it (the draft lets them); a short time keeps a changed callback URL current.
    res.set('cache-control', 'public, max-age=300').json(document);
  });
}
