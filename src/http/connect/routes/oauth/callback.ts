/** `GET`/`POST /oauth/callback`: the provider's answer to an OAuth flow, completed and shown as a page. */
import express, { type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { completeCallback } from '../../../../connect/flows.js';
import { LatchkeyError } from '../../../../domain/errors.js';
import { parse, statusOf } from '../../../errors.js';
import { readBinding } from '../../flow-cookie.js';
import { choicePage, resultPage } from '../../pages.js';
import { HTML_HEADERS, type ConnectHttp } from '../connect-http.js';

const CallbackQuery = z.looseObject({ state: z.string().max(16_384).optional() });
/** A form_post callback's fields: strings only (a repeated field is not valid OAuth). */
const CallbackForm = z.record(z.string().max(256), z.string().max(16_384));

/** The urlencoded body parser of response_mode=form_post. */
export const callbackForm = express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 50 });

/**
 * `POST /oauth/callback` (response_mode=form_post): a cross-site POST carries no SameSite=Lax
 * cookie, so without one the fields move to a GET (a top-level GET navigation does carry it); with
 * one it completes here.
 */
export function postCallbackRoute(http: ConnectHttp): RequestHandler {
  const { deps } = http;
  return (req, res, next) => {
    const fields = CallbackForm.safeParse(req.body ?? {});
    if (!fields.success) {
      http.errorPage(req, res, 400, 'invalid_callback', 'This authorization response is not valid.');
      return;
    }
    const url = new URL(`${deps.config.publicBaseUrl}/oauth/callback`);
    for (const [k, v] of Object.entries(fields.data)) url.searchParams.append(k, v);
    if (!readBinding(http.cookieOf(), req)) {
      res.status(303).set({ location: url.href, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }).end();
      return;
    }
    callback(http, req, res, url).catch(next);
  };
}

/** `GET /oauth/callback`. */
export function getCallbackRoute(http: ConnectHttp): RequestHandler {
  return (req, res, next) => {
    callback(http, req, res, new URL(req.originalUrl, http.deps.config.publicBaseUrl)).catch(next);
  };
}

async function callback(http: ConnectHttp, req: Request, res: Response, url: URL): Promise<void> {
  const { deps } = http;
  const sendPage = (status: number, html: string) => res.status(status).set(HTML_HEADERS).send(html);
  try {
    if (url.searchParams.getAll('state').length > 1) throw new LatchkeyError('invalid_input', 'invalid_callback', 'state is repeated');
    parse(CallbackQuery, Object.fromEntries(url.searchParams), 'query');
    const outcome = await completeCallback(deps, url, readBinding(http.cookieOf(), req));
    if (outcome.choice) {
      sendPage(200, choicePage(http.basePath, http.lookOf(req), outcome.choice));
      return;
    }
    if (outcome.result) {
      const { providerConfigKey, connectionId } = outcome.result;
      const integration = outcome.namespace ? deps.catalog.getIntegration(outcome.namespace, providerConfigKey) : undefined;
      const provider = integration && deps.catalog.getProvider(integration.spec.provider);
      const name = integration?.spec.displayName ?? provider?.spec.displayName ?? providerConfigKey;
      sendPage(
        200,
        resultPage(
          http.basePath,
          http.lookOf(req),
          { type: 'connect', providerConfigKey, ...(connectionId ? { connectionId } : {}) },
          name,
        ),
      );
      return;
    }
    const e = outcome.error ?? new LatchkeyError('invalid_input', 'invalid_state', 'This authorization response is not valid.');
    http.errorPage(req, res, statusOf(e), e.code, e.message, outcome.providerConfigKey);
  } catch (err) {
    if (err instanceof LatchkeyError) {
      http.errorPage(req, res, 400, 'invalid_callback', 'This authorization response is not valid.');
      return;
    }
    deps.logger.error({ err: (err as Error).message, path: req.path }, 'OAuth callback failed');
    http.errorPage(req, res, 503, 'temporarily_unavailable', 'The connection could not be saved right now. Please try again in a moment.');
  }
}
