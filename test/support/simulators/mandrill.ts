/**
 * Mandrill (Mailchimp Transactional), as its docs describe it:
 * - https://mailchimp.com/developer/transactional/guides/transactional-api-conventions/ (every call a POST of a JSON
 *   object to https://mandrillapp.com/api/1.0/<method>.json, "at minimum" with the key; "any non-200 HTTP response
 *   code an error"; `/users/ping` reachable at https://mandrillapp.com/api/1.0/users/ping.json)
 * - https://mandrillapp.com/api/docs/messages.html (messages/send: `{"key", "message": {..., "to": [{"email",
 *   "name", "type"}], ...}, "async", ...}`; the answer, one object per recipient `[{"email", "status",
 *   "reject_reason", "_id"}]`; the error shape `{"status": "error", "code", "name", "message"}`)
 * - https://mandrillapp.com/api/docs/senders.python.html (every call's errors: `Invalid_Key`, "The provided API key
 *   is not a valid Mandrill API key", whose message the client prints as "Invalid API key"; `ValidationError`, "The
 *   parameters passed to the API call are invalid or not provided when required")
 * - https://mailchimp.com/developer/release-notes/added-support-for-401-unauthorized-response-code/ (an invalid or
 *   revoked key is answered 401 since February 2023; other errors keep the 500 all errors had before)
 * The simulator answers only what Latchkey's tests need: a body it cannot read counts as one without a key.
 * Not in the pages read: `Invalid_Key`'s numeric `code` (the simulator sends -1, the value public client tests
 * record for it; Latchkey reads only the status) and users/ping's answer (the simulator sends the JSON string
 * "PONG!", what Mailchimp's generated clients type as a string; users/ping2 is "the JSON parser version").
 */
import { json, newState, opaque, type Handler, type ServedSimulator, type SimAnswer, type SimRequest } from './framework.js';

export const MANDRILL_HOST = 'mandrillapp.com';

/** The documented error answers. */
export const INVALID_KEY = { status: 'error', code: -1, name: 'Invalid_Key', message: 'Invalid API key' };

export interface MandrillSimulator extends ServedSimulator {
  /** The account's valid API key. */
  key: string;
  /** The JSON objects the API received (after Latchkey's proxy), newest last. */
  received: Array<Record<string, unknown>>;
}

/** Without an end-to-end case: test/providers/mandrill-body-key.test.ts drives it itself. */
export function mandrill(): MandrillSimulator {
  const key = opaque('md-', 11);
  const received: Array<Record<string, unknown>> = [];

  /** A call's parameters: a JSON object (or, as the conventions allow, form parameters); the key checked first. */
  const call =
    (answer: (params: Record<string, unknown>) => SimAnswer): Handler =>
    (req: SimRequest) => {
      const params = paramsOf(req) ?? {};
      received.push(params);
      // No key, or not this account's: "not a valid Mandrill API key".
      if (params.key !== key) return json(401, INVALID_KEY);
      return answer(params);
    };

  return {
    manifest: 'mandrill',
    hosts: [MANDRILL_HOST],
    docs: [
      'https://mailchimp.com/developer/transactional/guides/transactional-api-conventions/',
      'https://mandrillapp.com/api/docs/messages.html',
      'https://mandrillapp.com/api/docs/senders.python.html',
      'https://mailchimp.com/developer/release-notes/added-support-for-401-unauthorized-response-code/',
    ],
    // API_KEY: no OAuth client; never sent.
    client: { clientId: opaque('unused-', 8), clientSecret: opaque('', 8) },
    state: newState(),
    key,
    received,
    routes: [
      { method: 'POST', host: MANDRILL_HOST, path: '/api/1.0/users/ping.json', handler: call(() => json(200, JSON.stringify('PONG!'))) },
      {
        method: 'POST',
        host: MANDRILL_HOST,
        path: '/api/1.0/messages/send.json',
        handler: call((params) => {
          const to = (params.message as { to?: Array<{ email?: unknown }> } | undefined)?.to ?? [];
          // "reject_reason": only for a "rejected" recipient; a sent one has none.
          return json(
            200,
            to.map((r) => ({ email: String(r.email), status: 'sent', reject_reason: null, _id: opaque('', 16) })),
          );
        }),
      },
    ],
  };
}

function paramsOf(req: SimRequest): Record<string, unknown> | undefined {
  if (String(req.headers['content-type'] ?? '').startsWith('application/json')) {
    try {
      const parsed = JSON.parse(req.body) as unknown;
      return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  }
  return req.form.size ? Object.fromEntries(req.form) : undefined;
}
