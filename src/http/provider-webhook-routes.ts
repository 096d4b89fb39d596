/**
 * The public endpoint providers send their webhooks to: `POST /webhooks/{namespace}/{integration}`,
 * published by the Ingress. No secret key: the provider's signature is the authentication
 * (src/webhooks/provider-events.ts). The body is read raw, up to the Provider's limit, since the
 * signature covers its exact bytes.
 */
import express, { type Request, type Response, type Router } from 'express';
import type { AppContext } from '../context/app-context.js';
import { ProviderWebhookReceiver, type ProviderWebhookAnswer } from '../webhooks/provider-events.js';
import { methodNotAllowed } from './method-not-allowed.js';

export const PROVIDER_WEBHOOK_PATH = '/webhooks/:namespace/:integration';

export function providerWebhookRoutes(ctx: AppContext, receiver = new ProviderWebhookReceiver(ctx)): Router {
  const router = express.Router();
  router.post(PROVIDER_WEBHOOK_PATH, (req: Request, res: Response, next) => {
    const target = receiver.target(String(req.params.namespace), String(req.params.integration));
    if (!target) {
      answer(res, { status: 404, contentType: 'application/json', body: notFound });
      return;
    }
    const read = express.raw({ limit: receiver.maxBodyBytes(target), type: () => true });
    read(req, res, (err?: unknown) => {
      if (err) {
        const status = (err as { status?: number }).status;
        if (status === 413) answer(res, receiver.refuseTooLarge(target));
        else answer(res, { status: 400, contentType: 'application/json', body: unreadable });
        return;
      }
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const query = new URL(req.originalUrl, 'http://localhost').searchParams;
      receiver
        .receive(target, {
          method: req.method,
          // The URL Latchkey publishes for the Integration, which is the one the provider signs (HubSpot v3).
          url: `${ctx.config.publicBaseUrl}${req.originalUrl}`,
          headers: headersOf(req),
          body,
          json: jsonOf(body),
          query,
        })
        .then((a) => answer(res, a), next);
    });
  });
  // Some providers check the URL with a HEAD request before sending (Intercom).
  router.head(PROVIDER_WEBHOOK_PATH, (req: Request, res: Response) => {
    res.status(receiver.target(String(req.params.namespace), String(req.params.integration)) ? 200 : 404).end();
  });
  router.use(
    methodNotAllowed([
      { method: 'POST', path: PROVIDER_WEBHOOK_PATH },
      { method: 'HEAD', path: PROVIDER_WEBHOOK_PATH },
    ]),
  );
  return router;
}

const notFound = JSON.stringify({ error: { code: 'not_found', message: 'No integration here takes provider webhooks.' } });
const unreadable = JSON.stringify({ error: { code: 'invalid_body', message: 'The body could not be read.' } });

function answer(res: Response, a: ProviderWebhookAnswer): void {
  res.status(a.status);
  res.set({ 'content-type': `${a.contentType}; charset=utf-8`, 'x-content-type-options': 'nosniff', ...(a.headers ?? {}) });
  res.send(a.body);
}

function headersOf(req: Request): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(req.headers)) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

function jsonOf(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined; // signed and forwarded as text (Slack's interactive payloads are form-encoded)
  }
}
