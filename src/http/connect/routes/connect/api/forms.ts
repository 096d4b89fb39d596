/** `POST /connect/api/forms`: a credentials form submitted (API keys, basic credentials, the modes without a redirect). */
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { submitForm } from '../../../../../connect/flows.js';
import { parse } from '../../../../errors.js';
import { sessionOf, wrap, type ConnectHttp } from '../../connect-http.js';

const FormBody = z.strictObject({
  integration: z.string().min(1).max(63),
  values: z.record(z.string(), z.string().max(4096)),
  connectionConfig: z.record(z.string(), z.string().max(1024)).optional(),
});

export function formsRoute(http: ConnectHttp): RequestHandler {
  const { deps } = http;
  return wrap(async (req, res) => {
    const session = sessionOf(deps, req);
    const body = parse(FormBody, req.body, 'body');
    const { operation: _operation, ...result } = await submitForm(
      deps,
      session,
      body.integration,
      body.values,
      body.connectionConfig ?? {},
    );
    res.set('cache-control', 'no-store').status(201).json({ data: result });
  });
}
