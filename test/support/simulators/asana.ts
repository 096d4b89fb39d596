/**
 * Asana, as its docs describe it:
 * - https://developers.asana.com/docs/oauth (GET https://app.asana.com/-/oauth_authorize with `client_id`,
 *   `redirect_uri`, `response_type=code`, `state`, optional PKCE and `scope`; the redirect back: `code` and
 *   `state`, or `error=access_denied` and `state`; POST https://app.asana.com/-/oauth_token, a form with
 *   `grant_type`, `client_id`, `client_secret`, `redirect_uri`, `code`; the answer: `access_token`,
 *   `expires_in: 3600`, `token_type: "bearer"`, `data` (the user: `id`, `gid`, `name`, `email`), `refresh_token`;
 *   a refresh answers the same without `refresh_token` (the old one stays valid); a bad code: 400
 *   `{"error": "invalid_grant", "error_description": ...}`)
 * - https://developers.asana.com/reference/getuser (GET /api/1.0/users/me: `{"data": {...}}`; a bad token: 401
 *   `{"errors": [{"message": "Not Authorized"}]}`)
 * - https://developers.asana.com/reference/createwebhook and https://developers.asana.com/docs/webhooks-guide
 *   (POST https://app.asana.com/api/1.0/webhooks with `resource` and `target`: while the request is in flight
 *   Asana POSTs a handshake with `X-Hook-Secret` to the target, which must answer 200 or 204 with the same
 *   header, else the creation fails; then 201 with the webhook, `{"data": {"gid", "resource", "target",
 *   "active", ...}}`)
 */
import { randomBytes } from 'node:crypto';
import type { ProviderSimulator, SimRequest } from './framework.js';
import { e2eCase, getRoute, json, oauth2Provider, oauthErrors, opaqueClient, postRoute, redirect, tokenAnswer } from './framework.js';

const USER = { id: 4673218951, gid: '4673218951', name: 'Greg Sanchez', email: 'gsanchez@example.com' };

const NOT_AUTHORIZED = {
  errors: [
    {
      message: 'Not Authorized',
      help: 'For more information on API status codes and how to handle them, read the docs on errors: https://developers.asana.com/docs/errors',
    },
  ],
};

/** One webhook creation the simulator handled: the secret its handshake sent, and whether the target echoed it. */
export interface AsanaCreation {
  target: string;
  secret: string;
  handshakeStatus: number;
  confirmed: boolean;
}

/** The webhooks side: every creation, and a hook run before Asana's handshake (a peer racing it, in a test). */
export interface AsanaWebhooks {
  creations: AsanaCreation[];
  beforeHandshake?: (target: string) => Promise<void>;
}

export function asana(): ProviderSimulator & { webhooks: AsanaWebhooks } {
  const webhooks: AsanaWebhooks = { creations: [] };

  /** createwebhook: the handshake to the target while the creation is in flight, then the answer. */
  const createWebhook = async (req: SimRequest) => {
    // The reference's body is JSON `{"data": {...}}`; its curl example sends a form.
    const fields = String(req.headers['content-type'] ?? '').includes('json')
      ? new URLSearchParams(Object.entries((JSON.parse(req.body || '{}') as { data?: Record<string, string> }).data ?? {}))
      : req.form;
    const target = fields.get('target');
    if (!target || !fields.get('resource')) return json(400, { errors: [{ message: `${target ? 'resource' : 'target'}: Missing input` }] });
    await webhooks.beforeHandshake?.(target);
    const secret = randomBytes(32).toString('hex');
    const answer = await fetch(target, { method: 'POST', headers: { 'x-hook-secret': secret } }).catch(() => undefined);
    const confirmed = !!answer && (answer.status === 200 || answer.status === 204) && answer.headers.get('x-hook-secret') === secret;
    webhooks.creations.push({ target, secret, handshakeStatus: answer?.status ?? 0, confirmed });
    if (!confirmed) return json(400, { errors: [{ message: 'The remote server did not respond with the handshake secret.' }] });
    return json(201, {
      data: {
        gid: String(43214 + webhooks.creations.length),
        resource: { gid: fields.get('resource'), name: 'Bugs' },
        target,
        active: false,
        last_success_at: null,
        last_failure_at: null,
        last_failure_content: null,
      },
    });
  };

  const simulator = oauth2Provider({
    manifest: 'asana',
    docs: [
      'https://developers.asana.com/docs/oauth',
      'https://developers.asana.com/reference/getuser',
      'https://developers.asana.com/reference/createwebhook',
      'https://developers.asana.com/docs/webhooks-guide',
    ],
    client: opaqueClient('1201234567890123', 16),
    authorize: {
      url: 'https://app.asana.com/-/oauth_authorize',
      provider: 'Asana',
      invalid: (req) => redirect(req.query.get('redirect_uri')!, { error: 'invalid_client', state: req.query.get('state') ?? '' }),
    },
    token: {
      url: 'https://app.asana.com/-/oauth_token',
      auth: 'either',
      accessPrefix: '2/1201234567890123/',
      refreshPrefix: '2/1201234567890123/',
      // A refresh answers the same without `refresh_token`: the old one stays valid.
      refresh: { rotate: false },
    },
    answer: tokenAnswer('access_token expires_in token_type data refresh_token', { expires_in: 3600, token_type: 'bearer', data: USER }),
    error: oauthErrors(
      {
        client: 'The client_id or client_secret is invalid.',
        grant: 'The `code` is invalid or has expired.',
        refresh: 'The refresh token is invalid.',
      },
      401,
    ),
    api: [
      getRoute(
        'https://app.asana.com/api/1.0/users/me',
        json(401, NOT_AUTHORIZED),
        json(200, {
          data: {
            gid: USER.gid,
            resource_type: 'user',
            name: USER.name,
            email: USER.email,
            photo: null,
            workspaces: [{ gid: '1331', resource_type: 'workspace', name: 'My Company Workspace' }],
          },
        }),
      ),
      postRoute('https://app.asana.com/api/1.0/webhooks', json(401, NOT_AUTHORIZED), createWebhook),
    ],
    e2e: e2eCase('GET /api/1.0/users/me', { data: { gid: USER.gid, resource_type: 'user' } }, { refreshes: true, failure: 'denied' }),
  });
  return { ...simulator, webhooks };
}
