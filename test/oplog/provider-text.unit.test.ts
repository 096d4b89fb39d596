/**
 * The one redaction of a provider's words (src/oplog/redact.ts): `providerAnswer` (the Connect flows'
 * token exchange), `providerText` (any provider text), `requestSecrets` (the values a request carried),
 * the refresher's classification that uses them (src/auth/refresh/errors.ts), and the APP and CUSTOM
 * token calls that quote a provider's message themselves. What the request
 * carried and the provider quoted back (found by secrets-in-connect-logs.test.ts and
 * secrets-in-refresh-failures.test.ts) does not come out; the status, OAuth error and description do.
 */
import { generateKeyPairSync } from 'node:crypto';
import * as oidc from 'openid-client';
import { requestInstallationToken } from '../../src/modes/shared/app-installation.js';
import { refreshUserToken } from '../../src/modes/custom/app-user-tokens.js';
import { classifyRefreshFailure, RefreshError } from '../../src/auth/refresh/errors.js';
import { providerAnswer, providerText, requestSecrets } from '../../src/oplog/redact.js';
import { oauth2Configuration } from '../../src/auth/oauth2-client.js';
import type { TokenResponseSpec } from '../../src/k8s/resources.js';

describe('providerAnswer', () => {
  it("keeps the token endpoint's status, error and description", () => {
    const err = { status: 401, error: 'invalid_client', error_description: 'client authentication failed', message: 'x' };
    expect(providerAnswer(err)).toBe('the token endpoint answered 401 invalid_client: client authentication failed');
    expect(providerAnswer(new Error('provider answered 401 at /access_token'))).toBe('provider answered 401 at /access_token');
  });

  it('removes the values the request carried wherever the provider quotes them, and what the log rules name', () => {
    const code = 'NWWnG2sabsFyf4tv4XQ0eXp1FJEaaxtfWmocS-cV4Ku';
    const verifier = '7yoS7ynOAHsRG_a0-fhIPjtvEs_HYaiQTWIi-sjB6eU';
    const clientSecret = 'logscan-client-secret-06df1e9731e7031426279895';
    const err = {
      status: 400,
      error: 'invalid_grant',
      error_description: `authorization code ${code} is invalid; code_verifier ${verifier} for client c1 with secret ${clientSecret}; refresh_token=abc123def`,
    };
    const text = providerAnswer(err, [code, verifier, clientSecret, undefined]);
    expect(text).toBe(
      'the token endpoint answered 400 invalid_grant: authorization code [redacted] is invalid; code_verifier [redacted] for client c1 with secret [redacted]; refresh_token=[redacted]',
    );
    expect(providerAnswer(new Error(`refused ${clientSecret}`), [clientSecret])).toBe('refused [redacted]');
  });
});

describe('a token error in a 200 answer (Slack, Reddit)', () => {
  // openid-client itself reads the answer: Latchkey turns the 200 error into a 400 for it, and the log
  // still says what the provider sent.
  const refreshToken = 'xoxe-1-refresh-0123456789abcdef';
  const failed = async (body: Record<string, unknown>, tokenResponse?: TokenResponseSpec) => {
    const config = oauth2Configuration({
      provider: {
        metadata: { name: 'chat' },
        spec: {
          displayName: 'Chat',
          authMode: 'OAUTH2',
          authorizationUrl: 'https://chat.example.test/authorize',
          tokenUrl: 'https://chat.example.test/token',
          ...(tokenResponse ? { tokenResponse } : {}),
        },
      },
      client: { clientId: 'c1', clientSecret: 'client-secret-0123456789' },
      purpose: 'refresh',
      fetch: (async () =>
        new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } })) as typeof fetch,
    });
    return oidc.refreshTokenGrant(config, refreshToken).then(
      () => {
        throw new Error('refreshed');
      },
      (err: unknown) => err,
    );
  };

  it('logs the 200 and the error the provider sent, not a 400', async () => {
    const slack = await failed({ ok: false, error: 'invalid_refresh_token' }, { errorWhen: { path: 'ok', equals: false } });
    expect(providerAnswer(slack, [refreshToken])).toBe('the token endpoint answered 200 with error invalid_refresh_token');
    const failure = classifyRefreshFailure(slack, Date.now(), [refreshToken]);
    expect(failure.message).toBe('reauthorization required: token endpoint answered 200 with error invalid_refresh_token');
    expect(failure).toMatchObject({
      permanent: true,
      code: 'reauthorization_required',
      providerError: { status: 200, error: 'invalid_refresh_token' },
    });

    const reddit = await failed({ error: 'invalid_grant', error_description: `bad token ${refreshToken}` });
    expect(providerAnswer(reddit, [refreshToken])).toBe('the token endpoint answered 200 with error invalid_grant: bad token [redacted]');
  });
});

describe('providerText', () => {
  const secret = 'a-secret/with+odd chars~0123456789';

  it('removes a secret as it is, URL-encoded, form-encoded, strictly encoded (HTTP Basic) and JSON-escaped', () => {
    const strict = encodeURIComponent(secret).replace(/[-._~!*'()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    for (const form of [secret, encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2), strict]) {
      expect(providerText(`the provider quoted <${form}>`, [secret])).toBe('the provider quoted <[redacted]>');
    }
    expect(providerText(JSON.stringify({ got: `"${secret}"` }), [`"${secret}"`])).toBe('{"got":"[redacted]"}');
  });

  it('redacts before it cuts, so a cut never leaves the start of a secret', () => {
    const long = `${'x'.repeat(280)} ${secret} and more`;
    const out = providerText(long, [secret], 300);
    expect(out).not.toContain(secret.slice(0, 10));
    expect(out.length).toBeLessThanOrEqual(300);
    expect(providerText('y'.repeat(400), [], 300)).toHaveLength(300);
  });

  it('removes the longer secret first (a JWT, then its signature)', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiI0MiJ9.c2lnbmF0dXJlLXBhcnQtb2YtdGhlLWp3dA';
    const signature = jwt.split('.')[2]!;
    expect(providerText(`Bad credentials ${jwt}; signature ${signature}`, [signature, jwt])).toBe(
      'Bad credentials [redacted]; signature [redacted]',
    );
  });
});

describe('requestSecrets', () => {
  it('takes the Authorization credential (Basic: the client secret as sent and decoded), form values but the plain OAuth ones', () => {
    const secret = 'client-secret-0123456789';
    const encoded = encodeURIComponent(secret).replace(/-/g, '%2D');
    const basic = Buffer.from(`client%2Did:${encoded}`).toString('base64');
    const found = requestSecrets({
      headers: new Headers({ authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' }),
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'rt-0123456789', client_id: 'client-id', scope: 'a b' }),
    });
    expect(found).toEqual(expect.arrayContaining([`Basic ${basic}`, basic, encoded, secret, 'rt-0123456789']));
    expect(found).not.toContain('refresh_token');
    expect(found).not.toContain('client-id');
    expect(found).not.toContain('a b');
  });

  it("takes a bearer JWT and its signature, headers named like credentials, and a JSON body's values", () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiI0MiJ9.c2lnbmF0dXJl';
    const found = requestSecrets({
      headers: { authorization: `Bearer ${jwt}`, devKey: 'dev-key-0123456789', accept: 'application/json' },
      body: JSON.stringify({ username: 'ada@example.test', password: 'pw-0123456789', nested: { secret: 'nested-0123456789' } }),
    });
    expect(found).toEqual(
      expect.arrayContaining([jwt, 'c2lnbmF0dXJl', 'dev-key-0123456789', 'ada@example.test', 'pw-0123456789', 'nested-0123456789']),
    );
    expect(found).not.toContain('application/json');
    expect(requestSecrets(undefined)).toEqual([]);
  });
});

describe('classifyRefreshFailure', () => {
  const refreshToken = 'refresh-token-0123456789abcdef';
  const clientSecret = 'client-secret-0123456789abcdef';
  const quoted = `refresh token ${refreshToken} of the client with secret ${clientSecret} is unknown`;

  it("redacts a token endpoint's quoted error description in the message and providerError", () => {
    const response = new Response('{}', { status: 400 });
    const err = new oidc.ResponseBodyError('server responded with an error in the response body', {
      cause: { error: 'invalid_grant', error_description: quoted },
      response,
    });
    const failure = classifyRefreshFailure(err, Date.now(), [refreshToken, clientSecret]);
    expect(failure).toMatchObject({ permanent: true, code: 'reauthorization_required' });
    expect(failure.message).toBe(
      'reauthorization required: token endpoint answered 400 invalid_grant: refresh token [redacted] of the client with secret [redacted] is unknown',
    );
    expect(failure.providerError).toEqual({
      status: 400,
      error: 'invalid_grant',
      description: 'refresh token [redacted] of the client with secret [redacted] is unknown',
    });
  });

  it("redacts a strategy's own RefreshError that quotes the provider", () => {
    const own = new RefreshError(`reauthorization required: installation token endpoint answered 401: ${quoted}`, {
      permanent: true,
      code: 'reauthorization_required',
      providerError: { status: 401, description: quoted },
    });
    const failure = classifyRefreshFailure(own, Date.now(), [refreshToken, clientSecret]);
    expect(failure.message).not.toContain(refreshToken);
    expect(failure.message).not.toContain(clientSecret);
    expect(failure.providerError?.description).toBe('refresh token [redacted] of the client with secret [redacted] is unknown');
    expect(failure).toMatchObject({ permanent: true, code: 'reauthorization_required' });
  });
});

/** A token endpoint (a fetch, not a server) that quotes the request's Authorization header and body in `field`. */
function quotingFetch(status: number, field: 'message' | 'error'): typeof fetch {
  return (_url, init) => {
    const auth = new Headers(init?.headers).get('authorization') ?? '';
    const jwtSignature = auth.split('.')[2] ?? '';
    const values = [...new URLSearchParams(String(init?.body ?? '')).values()].join(' ');
    const said = `values ${values}; signature ${jwtSignature} of ${auth}; body ${String(init?.body ?? '')}`;
    return Promise.resolve(new Response(JSON.stringify({ [field]: said }), { status, headers: { 'content-type': 'application/json' } }));
  };
}

describe('token calls that quote the provider themselves', () => {
  it("APP: the installation token endpoint's message keeps neither the JWT nor its signature", async () => {
    const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    let sent = '';
    const fetchQuoting: typeof fetch = (url, init) => {
      sent = new Headers(init?.headers).get('authorization') ?? '';
      return quotingFetch(401, 'message')(url, init);
    };
    const failure = (await requestInstallationToken({
      appId: '42',
      privateKeyPem: pem,
      tokenUrl: 'https://api.example.test/app/installations/1/access_tokens',
      fetch: fetchQuoting,
      now: Date.now(),
    }).then(
      () => undefined,
      (e: unknown) => e,
    )) as RefreshError;
    expect(failure).toBeInstanceOf(RefreshError);
    const jwt = sent.replace(/^Bearer /, '');
    const signature = jwt.split('.')[2]!;
    for (const part of [jwt, signature, signature.slice(0, 16)]) {
      expect(failure.message).not.toContain(part);
      expect(failure.providerError?.description ?? '').not.toContain(part);
    }
    expect(failure.message).toContain('signature [redacted] of [redacted]');
  });

  it("CUSTOM: the user token endpoint's `error` keeps neither the refresh token nor the client secret", async () => {
    const refreshToken = 'ghr_0123456789abcdefghijklmnop';
    const clientSecret = 'client-secret-0123456789abcdef';
    const failure = (await refreshUserToken({
      tokenUrl: 'https://github.example.test/login/oauth/access_token',
      clientId: 'Iv1.client',
      clientSecret,
      refreshToken,
      fetch: quotingFetch(200, 'error'),
      now: Date.now(),
    }).then(
      () => undefined,
      (e: unknown) => e,
    )) as RefreshError;
    expect(failure).toMatchObject({ permanent: true, code: 'reauthorization_required' });
    for (const text of [failure.message, failure.providerError?.error ?? '']) {
      expect(text).not.toContain(refreshToken);
      expect(text).not.toContain(clientSecret);
      expect(text).not.toContain(refreshToken.slice(0, 16));
    }
    expect(failure.providerError?.error).toContain('values Iv1.client [redacted] refresh_token [redacted]');
  });
});
