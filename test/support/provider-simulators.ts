/**
 * Simulated providers: each signs an event the way its public webhook docs describe (the page is named
 * above each), independently of src/webhooks, so the engine is checked against the docs, not itself.
 */
import { createHmac, randomUUID } from 'node:crypto';

export interface SimulatedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface ProviderSimulator {
  /** The shipped manifest (config/providers/NAME.yaml). */
  provider: string;
  /** Where the Integration's Secret holds the signing secret, and the secret. */
  secretKey: 'webhookSecret' | 'clientSecret';
  secret: string;
  /** The Secret's key when it is not `secretKey` (a secret per provider webhook: `webhookSecret.<ID>`). */
  storedAs?: string;
  signatureHeader: string;
  /** Whether the signature covers a timestamp (so a replay outside the window is refused). */
  signsTime: boolean;
  /** The connection configuration that names the account of {@link event}'s events, when the provider routes. */
  account?: { key: string; value: string };
  /** A body as the provider sends it, for the account above. */
  event(): string;
  sign(body: string, nowMs: number, url?: string): SimulatedRequest;
  /** The request changed after signing (default: a field added to the JSON body). */
  tamper?(r: SimulatedRequest): SimulatedRequest;
  /** The request without its signature (default: without the signature header). */
  unsign?(r: SimulatedRequest): SimulatedRequest;
  /** The scheme it signs with when not the Provider's `signature`: its index in `webhooks.alternatives`. */
  alternative?: number;
  /** signsTime: how long after signing it is refused, in seconds (default the scheme's toleranceSeconds), and why. */
  lateAfterSeconds?: number;
  lateReason?: string;
}

/** A field added at the end of the JSON body (inside the outer object or the last array element). */
export function tampered(sim: ProviderSimulator, r: SimulatedRequest): SimulatedRequest {
  return sim.tamper ? sim.tamper(r) : { ...r, body: r.body.replace(/}(\s*][\s}]*)?$/, (end) => `,"x":1${end}`) };
}

export function unsigned(sim: ProviderSimulator, r: SimulatedRequest): SimulatedRequest {
  return sim.unsign
    ? sim.unsign(r)
    : { ...r, headers: Object.fromEntries(Object.entries(r.headers).filter(([k]) => k !== sim.signatureHeader)) };
}

const hmac = (secret: string, content: string) => createHmac('sha256', secret).update(content);

/** How long the simulated Atlassian JWT is valid (exp − iat). */
export const JWT_LIFETIME_SECONDS = 180;

/** An HS256 JWT (RFC 7519) issued at `now`, built by hand so the verifier is checked against the RFC, not itself. */
export function jwtHs256(secret: string, now: number, claims: Record<string, unknown> = {}): string {
  const iat = Math.floor(now / 1000);
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const signing = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ iat, exp: iat + JWT_LIFETIME_SECONDS, ...claims })}`;
  return `${signing}.${createHmac('sha256', secret).update(signing).digest('base64url')}`;
}
const DEFAULT_URL = 'https://latchkey.example/webhooks/ns/x';
const json = { 'content-type': 'application/json' };

/** https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries */
const github = (provider: string, installation?: string): ProviderSimulator => ({
  provider,
  secretKey: 'webhookSecret',
  secret: "It's a Secret to Everybody",
  signatureHeader: 'x-hub-signature-256',
  signsTime: false,
  ...(installation ? { account: { key: 'installationId', value: installation } } : {}),
  event: () =>
    JSON.stringify({
      action: 'opened',
      issue: { number: 1347, title: 'Found a bug' },
      repository: { full_name: 'octocat/Hello-World' },
      ...(installation ? { installation: { id: Number(installation), node_id: 'MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ==' } } : {}),
    }),
  sign: (body, _now, url = DEFAULT_URL) => ({
    method: 'POST',
    url,
    headers: {
      ...json,
      'x-github-event': 'issues',
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': `sha256=${hmac("It's a Secret to Everybody", body).digest('hex')}`,
    },
    body,
  }),
});

export const SIMULATORS: Record<string, ProviderSimulator> = {
  github: github('github'),
  'github-app': github('github-app', '12345678'),
  /** https://docs.slack.dev/authentication/verifying-requests-from-slack */
  slack: {
    provider: 'slack',
    secretKey: 'webhookSecret',
    secret: '8f742231b10e8888abcd99yyyzzz85a5',
    signatureHeader: 'x-slack-signature',
    signsTime: true,
    account: { key: 'teamId', value: 'T1DC2JH3J' },
    event: () =>
      JSON.stringify({
        token: 'XXYYZZ',
        team_id: 'T1DC2JH3J',
        api_app_id: 'AXXXXXXXXX',
        event: { type: 'app_mention', user: 'U2CERLKJA', text: 'hello', ts: '1515449522.000016', channel: 'C0LAN2Q65' },
        type: 'event_callback',
        event_id: `Ev${randomUUID().slice(0, 8)}`,
        event_time: 1515449522,
      }),
    sign: (body, now, url = DEFAULT_URL) => {
      const ts = String(Math.floor(now / 1000));
      return {
        method: 'POST',
        url,
        headers: {
          ...json,
          'x-slack-request-timestamp': ts,
          'x-slack-signature': `v0=${hmac('8f742231b10e8888abcd99yyyzzz85a5', `v0:${ts}:${body}`).digest('hex')}`,
        },
        body,
      };
    },
  },
  /** https://docs.stripe.com/webhooks#verify-manually */
  stripe: {
    provider: 'stripe',
    secretKey: 'webhookSecret',
    secret: 'whsec_test_1234567890abcdef',
    signatureHeader: 'stripe-signature',
    signsTime: true,
    account: { key: 'accountId', value: 'acct_1032D82eZvKYlo2C' },
    event: () =>
      JSON.stringify({
        id: `evt_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
        object: 'event',
        account: 'acct_1032D82eZvKYlo2C',
        api_version: '2024-06-20',
        type: 'customer.created',
        data: { object: { id: 'cus_123', object: 'customer' } },
      }),
    sign: (body, now, url = DEFAULT_URL) => {
      const t = String(Math.floor(now / 1000));
      const v1 = hmac('whsec_test_1234567890abcdef', `${t}.${body}`).digest('hex');
      return {
        method: 'POST',
        url,
        headers: { ...json, 'stripe-signature': `t=${t},v1=${v1},v0=6ffbb59b2300aae63f272406069a9788598b792a944a07aba816edb039989a39` },
        body,
      };
    },
  },
  /** https://shopify.dev/docs/apps/build/webhooks/subscribe/https */
  shopify: {
    provider: 'shopify',
    secretKey: 'clientSecret',
    secret: 'shpss_0123456789abcdef0123456789abcdef',
    signatureHeader: 'x-shopify-hmac-sha256',
    signsTime: false,
    account: { key: 'shop', value: 'johns-apparel' },
    event: () => JSON.stringify({ id: 820982911946154500, email: 'jon@example.com', total_price: '403.00' }),
    sign: (body, now, url = DEFAULT_URL) => ({
      method: 'POST',
      url,
      headers: {
        ...json,
        'x-shopify-topic': 'orders/create',
        'x-shopify-hmac-sha256': hmac('shpss_0123456789abcdef0123456789abcdef', body).digest('base64'),
        'x-shopify-shop-domain': 'johns-apparel.myshopify.com',
        'x-shopify-api-version': '2024-07',
        'x-shopify-webhook-id': randomUUID(),
        'x-shopify-triggered-at': new Date(now).toISOString(),
      },
      body,
    }),
  },
  /** https://developers.hubspot.com/docs/apps/legacy-apps/authentication/validating-requests (v3) */
  hubspot: {
    provider: 'hubspot',
    secretKey: 'clientSecret',
    secret: 'yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy',
    signatureHeader: 'x-hubspot-signature-v3',
    signsTime: true,
    account: { key: 'portalId', value: '62515' },
    event: () =>
      JSON.stringify([
        {
          eventId: 1,
          subscriptionId: 12345,
          portalId: 62515,
          occurredAt: 1564113600000,
          subscriptionType: 'contact.creation',
          attemptNumber: 0,
          objectId: 123,
          changeSource: 'CRM',
          changeFlag: 'NEW',
          appId: 54321,
        },
      ]),
    sign: (body, now, url = DEFAULT_URL) => {
      const ts = String(now);
      const signature = hmac('yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy', `POST${url}${body}${ts}`).digest('base64');
      return { method: 'POST', url, headers: { ...json, 'x-hubspot-signature-v3': signature, 'x-hubspot-request-timestamp': ts }, body };
    },
  },
  /** https://developers.zoom.us/docs/api/webhooks */
  zoom: {
    provider: 'zoom',
    secretKey: 'webhookSecret',
    secret: 'zoom-secret-token-0123456789',
    signatureHeader: 'x-zm-signature',
    signsTime: true,
    account: { key: 'accountId', value: 'AAAAAABBBB' },
    event: () =>
      JSON.stringify({
        event: 'meeting.started',
        event_ts: 1626230691572,
        payload: { account_id: 'AAAAAABBBB', object: { id: '1234567890', uuid: 'czLF6FFAQTeMuNjoNMVu/w==', topic: 'My Meeting' } },
      }),
    sign: (body, now, url = DEFAULT_URL) => {
      const ts = String(Math.floor(now / 1000));
      const signature = `v0=${hmac('zoom-secret-token-0123456789', `v0:${ts}:${body}`).digest('hex')}`;
      return { method: 'POST', url, headers: { ...json, 'x-zm-request-timestamp': ts, 'x-zm-signature': signature }, body };
    },
  },
  /** https://linear.app/developers/webhooks */
  linear: {
    provider: 'linear',
    secretKey: 'webhookSecret',
    secret: 'lin_wh_0123456789abcdef',
    signatureHeader: 'linear-signature',
    signsTime: true,
    account: { key: 'organizationId', value: '7bd4f3a4-8a55-4a7b-b1a2-7d4a0f4d2a11' },
    event: () =>
      JSON.stringify({
        action: 'create',
        type: 'Issue',
        data: { id: 'issue-1', title: 'Bug' },
        organizationId: '7bd4f3a4-8a55-4a7b-b1a2-7d4a0f4d2a11',
      }),
    // The timestamp is in the signed body: signing "at" a time rewrites webhookTimestamp.
    sign: (body, now, url = DEFAULT_URL) => {
      const stamped = JSON.stringify({ ...(JSON.parse(body) as object), webhookTimestamp: now });
      const headers = {
        ...json,
        'linear-delivery': randomUUID(),
        'linear-event': 'Issue',
        'linear-signature': hmac('lin_wh_0123456789abcdef', stamped).digest('hex'),
      };
      return { method: 'POST', url, headers, body: stamped };
    },
  },
  /** https://developer.calendly.com/api-docs/overview/webhooks/webhook-signatures */
  calendly: {
    provider: 'calendly',
    secretKey: 'webhookSecret',
    secret: 'calendly-signing-key-0123456789',
    signatureHeader: 'calendly-webhook-signature',
    signsTime: true,
    event: () =>
      JSON.stringify({
        created_at: '2020-11-23T17:51:19.000000Z',
        created_by: 'https://api.calendly.com/users/AAAAAAAAAAAAAAAA',
        event: 'invitee.created',
        payload: { email: 'test@example.com', name: 'John Doe', status: 'active' },
      }),
    sign: (body, now, url = DEFAULT_URL) => {
      const t = String(Math.floor(now / 1000));
      const v1 = hmac('calendly-signing-key-0123456789', `${t}.${body}`).digest('hex');
      return { method: 'POST', url, headers: { ...json, 'calendly-webhook-signature': `t=${t},v1=${v1}` }, body };
    },
  },
  /** https://www.typeform.com/developers/webhooks/secure-your-webhooks/ */
  typeform: {
    provider: 'typeform',
    secretKey: 'webhookSecret',
    secret: 'typeform-webhook-secret',
    signatureHeader: 'typeform-signature',
    signsTime: false,
    event: () =>
      JSON.stringify({
        event_id: `01${randomUUID().replace(/-/g, '').slice(0, 24).toUpperCase()}`,
        event_type: 'form_response',
        form_response: { form_id: 'lT4Z3j', token: 'a3a12ec67a1365927098a606107fac15', answers: [] },
      }),
    sign: (body, _now, url = DEFAULT_URL) => ({
      method: 'POST',
      url,
      headers: { ...json, 'typeform-signature': `sha256=${hmac('typeform-webhook-secret', body).digest('base64')}` },
      body,
    }),
  },
  /** https://developer.zendesk.com/documentation/webhooks/verifying/ */
  zendesk: {
    provider: 'zendesk',
    secretKey: 'webhookSecret',
    secret: 'dGhpc19zZWNyZXRfaXNfZm9yX3Rlc3Rpbmdfb25seQ',
    signatureHeader: 'x-zendesk-webhook-signature',
    signsTime: false,
    event: () => JSON.stringify({ type: 'zen:event-type:ticket.created', account_id: 22222222, detail: { id: '35436', subject: 'Help' } }),
    sign: (body, now, url = DEFAULT_URL) => {
      const ts = new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const signature = hmac('dGhpc19zZWNyZXRfaXNfZm9yX3Rlc3Rpbmdfb25seQ', `${ts}${body}`).digest('base64');
      return {
        method: 'POST',
        url,
        headers: { ...json, 'x-zendesk-webhook-signature-timestamp': ts, 'x-zendesk-webhook-signature': signature },
        body,
      };
    },
  },
  /** https://developers.intercom.com/docs/webhooks/setting-up-webhooks */
  intercom: {
    provider: 'intercom',
    secretKey: 'clientSecret',
    secret: 'intercom-client-secret-0123',
    signatureHeader: 'x-hub-signature',
    signsTime: false,
    account: { key: 'appId', value: 'abc123de' },
    event: () =>
      JSON.stringify({
        type: 'notification_event',
        app_id: 'abc123de',
        id: `notif_${randomUUID()}`,
        topic: 'contact.user.created',
        created_at: 1571080403,
        data: { type: 'notification_event_data', item: { type: 'contact', id: '5d9f1a2b' } },
      }),
    sign: (body, _now, url = DEFAULT_URL) => ({
      method: 'POST',
      url,
      headers: { ...json, 'x-hub-signature': `sha1=${createHmac('sha1', 'intercom-client-secret-0123').update(body).digest('hex')}` },
      body,
    }),
  },
  /** https://confluence.atlassian.com/adminjiraserver/managing-webhooks-938846912.html (admin webhooks with a secret) */
  jira: {
    provider: 'jira',
    alternative: 0,
    secretKey: 'webhookSecret',
    secret: 'jira-admin-webhook-secret',
    signatureHeader: 'x-hub-signature',
    signsTime: false,
    event: () =>
      JSON.stringify({
        timestamp: 1716000000000,
        webhookEvent: 'jira:issue_created',
        issue: { id: '10001', key: 'PROJ-1', self: 'https://example.atlassian.net/rest/api/2/issue/10001' },
      }),
    sign: (body, _now, url = DEFAULT_URL) => ({
      method: 'POST',
      url,
      headers: { ...json, 'x-hub-signature': `sha256=${hmac('jira-admin-webhook-secret', body).digest('hex')}` },
      body,
    }),
  },
  /**
   * Webhooks a Jira OAuth 2.0 app registers (POST /rest/api/3/webhook):
   * https://developer.atlassian.com/cloud/jira/platform/webhooks/#webhooks-authentication-for-oauth-2-0-apps
   * says they carry a JWT in `Authorization: Bearer` signed with the app's client secret. HS256, and
   * `iat`/`exp` three minutes apart, as Atlassian's client-secret JWTs have them; the page documents no
   * other claim, so none is sent. The body is as the payload examples show it (matchedWebhookIds).
   */
  'jira-oauth': {
    provider: 'jira',
    secretKey: 'clientSecret',
    secret: 'ATOA-jira-oauth-app-client-secret-0123456789',
    signatureHeader: 'authorization',
    signsTime: true,
    lateAfterSeconds: JWT_LIFETIME_SECONDS + 60,
    lateReason: 'the token has expired',
    event: () =>
      JSON.stringify({
        timestamp: 1716000000000,
        webhookEvent: 'jira:issue_updated',
        issue: { id: '10002', key: 'PROJ-2', self: 'https://example.atlassian.net/rest/api/3/issue/10002' },
        matchedWebhookIds: [10000],
      }),
    sign: (body, now, url = DEFAULT_URL) => ({
      method: 'POST',
      url,
      headers: { ...json, authorization: `Bearer ${jwtHs256('ATOA-jira-oauth-app-client-secret-0123456789', now)}` },
      body,
    }),
    // The JWT does not cover the body: tampering that counts is with the token (a later exp, same signature).
    tamper: (r) => {
      const [head, , sig] = r.headers.authorization!.slice('Bearer '.length).split('.');
      const claims = Buffer.from(JSON.stringify({ iat: 1, exp: 4102444800 })).toString('base64url');
      return { ...r, headers: { ...r.headers, authorization: `Bearer ${head}.${claims}.${sig}` } };
    },
  },
  /** https://airtable.com/developers/web/api/webhooks-overview */
  airtable: {
    provider: 'airtable',
    secretKey: 'webhookSecret',
    // macSecretBase64 as "create webhook" returns it: the HMAC key is its decoded bytes.
    secret: Buffer.from('airtable-mac-secret-bytes-0123456789').toString('base64'),
    storedAs: 'webhookSecret.ach00000000000000',
    signatureHeader: 'x-airtable-content-mac',
    signsTime: false,
    account: { key: 'baseId', value: 'app00000000000000' },
    event: () =>
      JSON.stringify({ base: { id: 'app00000000000000' }, webhook: { id: 'ach00000000000000' }, timestamp: new Date().toISOString() }),
    sign: (body, _now, url = DEFAULT_URL) => ({
      method: 'POST',
      url,
      headers: {
        ...json,
        'x-airtable-content-mac': `hmac-sha256=${createHmac('sha256', Buffer.from('airtable-mac-secret-bytes-0123456789')).update(body).digest('hex')}`,
      },
      body,
    }),
  },
  /** https://learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks */
  outlook: {
    provider: 'outlook',
    secretKey: 'webhookSecret',
    secret: 'SecretClientState',
    signatureHeader: 'none',
    signsTime: false,
    account: { key: 'tenantId', value: '84bd8158-6d4d-4958-8b9f-9d6445542f95' },
    event: () => graphNotification('SecretClientState'),
    sign: (body, _now, url = DEFAULT_URL) => ({ method: 'POST', url, headers: json, body }),
    // The clientState is the only proof: tampering means another one, unsigned means none.
    tamper: (r) => ({ ...r, body: r.body.replace('"clientState":"SecretClientState"', '"clientState":"SecretClientStatf"') }),
    unsign: (r) => ({ ...r, body: r.body.replace(/"clientState":"[^"]*",/, '') }),
  },
};

function graphNotification(clientState: string): string {
  return JSON.stringify({
    value: [
      {
        id: 'lsgTZMr9KwAAA',
        subscriptionId: '{subscription_guid}',
        subscriptionExpirationDateTime: '2016-03-19T22:11:09.952Z',
        clientState,
        changeType: 'created',
        resource: 'users/{user_guid}@{tenant_guid}/messages/{long_id_string}',
        tenantId: '84bd8158-6d4d-4958-8b9f-9d6445542f95',
        resourceData: {
          '@odata.type': '#Microsoft.Graph.Message',
          '@odata.id': 'Users/{user_guid}@{tenant_guid}/Messages/{long_id_string}',
          id: '{long_id_string}',
        },
      },
    ],
  });
}

/**
 * Asana, as https://developers.asana.com/reference/createwebhook and
 * https://developers.asana.com/docs/webhooks-guide describe it: creating a webhook (POST
 * https://app.asana.com/api/1.0/webhooks, `resource` and `target`) makes Asana POST a handshake with `X-Hook-Secret` to the target
 * while the creation is in flight; the target must answer 200 or 204 with the same header, or the
 * creation fails. Events then carry `X-Hook-Signature`, the hex HMAC-SHA256 of the body with that
 * secret; heartbeats are events with an empty `events` array. Not in {@link SIMULATORS}: its secret
 * comes from a handshake, not from the Integration's Secret. The creation itself is the doc-true
 * simulator's (test/support/simulators/asana.ts).
 */
export const ASANA = {
  provider: 'asana',
  handshake: (url: string, secret: string): SimulatedRequest => ({ method: 'POST', url, headers: { 'x-hook-secret': secret }, body: '' }),
  event: () =>
    JSON.stringify({
      events: [
        {
          user: { gid: '1201', resource_type: 'user' },
          created_at: '2026-11-27T12:00:00.000Z',
          action: 'changed',
          resource: { gid: '8675309', resource_type: 'task', resource_subtype: 'default_task' },
          parent: null,
          change: { field: 'name', action: 'changed' },
        },
      ],
    }),
  heartbeat: () => JSON.stringify({ events: [] }),
  sign: (body: string, secret: string, url: string): SimulatedRequest => ({
    method: 'POST',
    url,
    headers: { ...json, 'x-hook-signature': hmac(secret, body).digest('hex') },
    body,
  }),
};
