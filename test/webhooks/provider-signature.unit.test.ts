/**
 * The signature engine against the shipped Provider manifests (config/providers), with the providers'
 * own documented examples where the docs give one, and requests signed the way each doc describes
 * (test/support/provider-simulators.ts) where they do not; and the same requests tampered with.
 */
import { verifySignature, type ReceivedRequest } from '../../src/webhooks/provider-signature.js';
import { signedHandshake, unsignedHandshake } from '../../src/webhooks/provider-handshakes.js';
import { valuesAt } from '../../src/webhooks/provider-values.js';
import { createHmac } from 'node:crypto';
import { catalogSpec } from '../support/catalog-files.js';
import { jwtHs256, SIMULATORS, tampered, unsigned, type SimulatedRequest } from '../support/provider-simulators.js';

const signatureOf = (provider: string) => catalogSpec(provider).webhooks!.signature;

function request(r: SimulatedRequest | { method?: string; url?: string; headers: Record<string, string>; body: string }): ReceivedRequest {
  const body = Buffer.from(r.body);
  let json: unknown;
  try {
    json = JSON.parse(r.body);
  } catch {
    json = undefined;
  }
  return { method: r.method ?? 'POST', url: r.url ?? 'https://latchkey.example/webhooks/ns/x', headers: r.headers, body, json };
}

const tamper = (r: ReceivedRequest): ReceivedRequest => {
  const body = Buffer.from(r.body);
  body[body.length - 2] ^= 1;
  return { ...r, body };
};

describe('documented examples', () => {
  // https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries#testing-the-webhook-payload-validation
  it("GitHub: the docs' secret, payload and X-Hub-Signature-256 verify; one changed byte does not", () => {
    const r = request({
      headers: { 'x-hub-signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17' },
      body: 'Hello, World!',
    });
    for (const provider of ['github', 'github-app']) {
      expect(verifySignature(signatureOf(provider), r, "It's a Secret to Everybody", Date.now())).toEqual({ ok: true });
      expect(verifySignature(signatureOf(provider), tamper(r), "It's a Secret to Everybody", Date.now()).ok).toBe(false);
    }
  });

  // https://docs.slack.dev/authentication/verifying-requests-from-slack (the slash command example)
  it("Slack: the docs' signing secret, timestamp, body and X-Slack-Signature verify at that time; not five minutes later", () => {
    const body =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar' +
      '&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com' +
      '%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    const r = request({
      headers: {
        'x-slack-request-timestamp': '1531420618',
        'x-slack-signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
      },
      body,
    });
    const secret = '8f742231b10e8888abcd99yyyzzz85a5';
    expect(verifySignature(signatureOf('slack'), r, secret, 1531420618_000)).toEqual({ ok: true });
    expect(verifySignature(signatureOf('slack'), tamper(r), secret, 1531420618_000).ok).toBe(false);
    expect(verifySignature(signatureOf('slack'), r, secret, (1531420618 + 301) * 1000)).toEqual({
      ok: false,
      reason: 'the timestamp is more than 300 s from now',
    });
  });
});

describe.each(Object.keys(SIMULATORS))('%s as its docs describe', (provider) => {
  const sim = SIMULATORS[provider]!;
  const spec = () =>
    sim.alternative === undefined ? signatureOf(sim.provider) : catalogSpec(sim.provider).webhooks!.alternatives![sim.alternative]!;
  const now = Date.now();

  it('verifies a signed event', () => {
    const r = sim.sign(sim.event(), now);
    expect(verifySignature(spec(), request(r), sim.secret, now)).toEqual({ ok: true });
  });

  it('refuses it tampered with, signed with another secret, or unsigned', () => {
    const signed = sim.sign(sim.event(), now);
    expect(verifySignature(spec(), request(tampered(sim, signed)), sim.secret, now).ok).toBe(false);
    expect(verifySignature(spec(), request(signed), `A${sim.secret}`, now).ok).toBe(false);
    expect(verifySignature(spec(), request(unsigned(sim, signed)), sim.secret, now).ok).toBe(false);
  });

  if (sim.signsTime) {
    it('refuses it replayed just outside its window, and takes it just inside', () => {
      const window = sim.lateAfterSeconds ?? spec().timestamp!.toleranceSeconds;
      const late = request(sim.sign(sim.event(), now - (window + 1) * 1000));
      expect(verifySignature(spec(), late, sim.secret, now)).toEqual({
        ok: false,
        reason: sim.lateReason ?? `the timestamp is more than ${window} s from now`,
      });
      const inTime = request(sim.sign(sim.event(), now - (window - 1) * 1000));
      expect(verifySignature(spec(), inTime, sim.secret, now)).toEqual({ ok: true });
    });
  }
});

describe('jwt-hs256 (Jira OAuth 2.0 app webhooks)', () => {
  const spec = () => signatureOf('jira');
  const secret = SIMULATORS['jira-oauth']!.secret;
  const now = Date.now();
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const bearer = (token: string) => request({ headers: { authorization: `Bearer ${token}` }, body: '{}' });
  const signedWith = (head: unknown, claims: unknown, key = secret) => {
    const signing = `${b64(head)}.${b64(claims)}`;
    return `${signing}.${createHmac('sha256', key).update(signing).digest('base64url')}`;
  };
  const iat = Math.floor(now / 1000);

  it('takes an HS256 token signed with the client secret, its exp ahead', () => {
    expect(verifySignature(spec(), bearer(jwtHs256(secret, now)), secret, now)).toEqual({ ok: true });
  });

  it('refuses alg none, another algorithm, no exp, an iat ahead, and a token that is not one', () => {
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ iat, exp: iat + 180 })}.`;
    expect(verifySignature(spec(), bearer(none), secret, now).ok).toBe(false);
    expect(verifySignature(spec(), bearer(signedWith({ alg: 'HS512' }, { iat, exp: iat + 180 })), secret, now)).toEqual({
      ok: false,
      reason: 'the token is not signed with HS256',
    });
    expect(verifySignature(spec(), bearer(signedWith({ alg: 'HS256' }, { iat })), secret, now)).toEqual({
      ok: false,
      reason: 'the token has no exp',
    });
    expect(verifySignature(spec(), bearer(signedWith({ alg: 'HS256' }, { iat: iat + 600, exp: iat + 780 })), secret, now)).toEqual({
      ok: false,
      reason: 'the token is issued in the future',
    });
    expect(verifySignature(spec(), bearer('not-a-jwt'), secret, now)).toEqual({ ok: false, reason: 'the token is not a JWT' });
    expect(
      verifySignature(spec(), request({ headers: { authorization: `Basic ${jwtHs256(secret, now)}` }, body: '{}' }), secret, now).ok,
    ).toBe(false);
  });

  it('refuses a token signed with another secret (the admin webhook secret, say)', () => {
    expect(
      verifySignature(spec(), bearer(signedWith({ alg: 'HS256' }, { iat, exp: iat + 180 }, 'jira-admin-webhook-secret')), secret, now),
    ).toEqual({
      ok: false,
      reason: 'the signature does not match',
    });
  });
});

describe('handshakes', () => {
  // https://api.slack.com/events/url_verification
  it('Slack url_verification: the challenge back as text/plain', () => {
    const json = {
      token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl',
      challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
      type: 'url_verification',
    };
    expect(signedHandshake('slack-url-verification', json, 's')).toEqual({
      status: 200,
      contentType: 'text/plain',
      body: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
    });
    expect(signedHandshake('slack-url-verification', { type: 'event_callback', challenge: 'x' }, 's')).toBeUndefined();
  });

  it('Microsoft Graph validationToken: echoed as text/plain; nothing without it', () => {
    expect(unsignedHandshake('graph-validation-token', new URLSearchParams('validationToken=Validation%3A%20Testing'))).toEqual({
      status: 200,
      contentType: 'text/plain',
      body: 'Validation: Testing',
    });
    expect(unsignedHandshake('graph-validation-token', new URLSearchParams(''))).toBeUndefined();
    expect(unsignedHandshake(undefined, new URLSearchParams('validationToken=x'))).toBeUndefined();
  });
});

describe('valuesAt', () => {
  it('follows dotted paths and * over arrays, keeping scalars', () => {
    expect(valuesAt({ installation: { id: 42 } }, 'installation.id')).toEqual([42]);
    expect(valuesAt([{ portalId: 1 }, { portalId: 2 }, {}], '*.portalId')).toEqual([1, 2]);
    expect(valuesAt({ a: null }, 'a.b')).toEqual([]);
    expect(valuesAt('text', 'a')).toEqual([]);
  });

  it('takes * over an array of 200,000 elements a sender posted (no stack overflow), and a client-state check refuses it', () => {
    const bomb = { value: new Array<number>(200_000).fill(0) };
    expect(valuesAt(bomb, 'value.*')).toHaveLength(200_000);
    expect(valuesAt(bomb, 'value.*.clientState')).toEqual([]);
    const body = JSON.stringify(bomb);
    const verdict = verifySignature(
      signatureOf('outlook'),
      { method: 'POST', url: 'https://latchkey.example.com/webhooks/ns/outlook', headers: {}, body: Buffer.from(body), json: bomb },
      'SecretClientState',
      Date.now(),
    );
    expect(verdict.ok).toBe(false);
  });
});
