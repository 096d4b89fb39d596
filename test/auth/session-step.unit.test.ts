/**
 * A post-connection step's `sessionToken` (a second login, as Bullhorn's) and the token parameters a
 * Provider sends in the URL (`tokenRequestBodyFormat: query`): the step's URL takes `${accessToken}` in its
 * query only, the session token comes out of the answer (a missing one fails the step), the step runs even
 * when its configuration is already known, and renewal returns the new session token and the values its answer
 * gives again, or a classified refresh failure (transient or permanent by the answer), without the token. The step's answers
 * come from a fetch handed in (test/providers/bullhorn-session.test.ts runs Bullhorn's simulator).
 */
import type * as oidc from 'openid-client';
import { renewSession, withProviderValues } from '../../src/auth/post-connection.js';
import { RefreshError } from '../../src/auth/refresh/errors.js';
import { encodeTokenRequest } from '../../src/auth/token-request.js';
import { systemClock } from '../../src/domain/clock.js';
import { hasCode } from '../../src/domain/errors.js';
import type { PostConnectionStep, ProviderResource, ProviderSpec } from '../../src/k8s/resources.js';

function providerWith(step: Partial<PostConnectionStep>): ProviderResource {
  const spec = {
    displayName: 'Bullhorn',
    authMode: 'OAUTH2',
    authorizationUrl: 'https://auth.example.com/authorize',
    tokenUrl: 'https://auth.example.com/token',
    connectionConfiguration: [
      { name: 'loginHost', enum: ['rest.example.com'], default: 'rest.example.com', required: false },
      { name: 'restHost', hostSuffixes: ['example.com'], from: { step: 'login', path: 'restUrl', as: 'host' } },
    ],
    postConnection: {
      name: 'login',
      steps: [
        {
          name: 'login',
          method: 'POST',
          url: 'https://${connectionConfig.loginHost}/login?version=*&access_token=${accessToken}',
          headers: {},
          sessionToken: 'BhRestToken',
          ...step,
        },
      ],
    },
  } as ProviderSpec;
  return { metadata: { name: 'bullhorn' }, spec } as unknown as ProviderResource;
}

function ctxAnswering(answer: unknown) {
  const calls: Array<{ url: string; headers: Headers }> = [];
  const ctx = {
    clock: systemClock,
    fetch: (async (url: string, init: RequestInit) => {
      calls.push({ url: String(url), headers: new Headers(init.headers) });
      return new Response(JSON.stringify(answer), { status: 200, headers: { 'content-type': 'application/json' } });
    }) as unknown as typeof fetch,
  };
  return { ctx, calls };
}

const LOG = { namespace: 'ns', operation: 'authorization' as const, integration: 'bullhorn' };
const ANSWER = { BhRestToken: 'session-1', restUrl: 'https://rest22.example.com/rest-services/e999/' };

describe('a session step', () => {
  it('logs in with the access token in its query (encoded), takes the session token and the values, and sends no bearer', async () => {
    const { ctx, calls } = ctxAnswering(ANSWER);
    let session: string | undefined;
    const values = await withProviderValues(ctx as never, {
      provider: providerWith({}),
      accessToken: 'a token&more',
      connectionConfig: {},
      log: LOG,
      onSessionToken: (t) => (session = t),
    });
    expect(values).toEqual({ loginHost: 'rest.example.com', restHost: 'rest22.example.com' });
    expect(session).toBe('session-1');
    expect(calls[0]!.url).toBe('https://rest.example.com/login?version=*&access_token=a%20token%26more');
    expect(calls[0]!.headers.get('authorization')).toBeNull();
  });

  it('runs even when the configuration it gives is known (a reconnect or an import that gives it)', async () => {
    const { ctx, calls } = ctxAnswering(ANSWER);
    let session: string | undefined;
    await withProviderValues(ctx as never, {
      provider: providerWith({}),
      accessToken: 't',
      connectionConfig: { restHost: 'rest22.example.com' },
      log: LOG,
      onSessionToken: (t) => (session = t),
    });
    expect(calls).toHaveLength(1);
    expect(session).toBe('session-1');
  });

  it('fails the step when the answer has no session token', async () => {
    const { ctx } = ctxAnswering({ restUrl: ANSWER.restUrl });
    const err = await withProviderValues(ctx as never, {
      provider: providerWith({}),
      accessToken: 't',
      connectionConfig: {},
      log: LOG,
    }).catch((e: unknown) => e);
    expect(hasCode(err, 'post_connection_failed')).toBe(true);
  });

  it('refuses ${accessToken} outside the query, sending nothing', async () => {
    const { ctx, calls } = ctxAnswering(ANSWER);
    const err = await withProviderValues(ctx as never, {
      provider: providerWith({ url: 'https://${connectionConfig.loginHost}/${accessToken}/login' }),
      accessToken: 't',
      connectionConfig: {},
      log: LOG,
    }).catch((e: unknown) => e);
    expect(hasCode(err, 'post_connection_failed')).toBe(true);
    expect(calls).toEqual([]);
  });

  it('renews: the step again with a new access token gives the new session token and the values its answer gives', async () => {
    const { ctx, calls } = ctxAnswering({ ...ANSWER, BhRestToken: 'session-2', restUrl: 'https://rest33.example.com/rest-services/e999/' });
    const renewed = await renewSession(ctx as never, {
      provider: providerWith({}),
      accessToken: 'new-token',
      connectionConfig: { loginHost: 'rest.example.com', restHost: 'rest22.example.com' },
      log: LOG,
    });
    expect(renewed).toEqual({ token: 'session-2', values: { restHost: 'rest33.example.com' } });
    expect(new URL(calls[0]!.url).searchParams.get('access_token')).toBe('new-token');
  });

  it("renews: a value breaking its key's rule is left out (the stored one is kept), the session token still taken", async () => {
    const { ctx } = ctxAnswering({ BhRestToken: 'session-3', restUrl: 'https://elsewhere.test/rest-services/e999/' });
    const renewed = await renewSession(ctx as never, {
      provider: providerWith({}),
      accessToken: 'new-token',
      connectionConfig: { loginHost: 'rest.example.com', restHost: 'rest22.example.com' },
      log: LOG,
    });
    expect(renewed).toEqual({ token: 'session-3', values: {} });
  });

  it.each([
    [503, false, 'provider_unavailable'],
    [429, false, 'provider_unavailable'],
    [401, true, 'reauthorization_required'],
    [307, true, 'reauthorization_required'],
  ])('renews: a login answered %i is a refresh failure, permanent %s, never holding the token', async (status, permanent, code) => {
    const ctx = {
      clock: systemClock,
      fetch: (async () => new Response('Invalid or expired OAuth access token: new-token', { status })) as unknown as typeof fetch,
    };
    const err = await renewSession(ctx as never, {
      provider: providerWith({}),
      accessToken: 'new-token',
      connectionConfig: { loginHost: 'rest.example.com' },
      log: LOG,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RefreshError);
    expect(err).toMatchObject({ permanent, code, providerError: { status } });
    expect((err as Error).message).toContain(`step login): answered ${status}`);
    expect((err as Error).message).not.toContain('new-token');
  });

  it('renews: no answer, or one without the session token, is a transient refresh failure', async () => {
    const unreachable = {
      clock: systemClock,
      fetch: (async () => {
        throw new TypeError('fetch failed');
      }) as unknown as typeof fetch,
    };
    const input = { provider: providerWith({}), accessToken: 'new-token', connectionConfig: { loginHost: 'rest.example.com' }, log: LOG };
    await expect(renewSession(unreachable as never, input)).rejects.toMatchObject({ permanent: false, code: 'provider_unavailable' });
    const { ctx } = ctxAnswering({ restUrl: ANSWER.restUrl });
    await expect(renewSession(ctx as never, input)).rejects.toMatchObject({ permanent: false, code: 'provider_unavailable' });
  });
});

describe('tokenRequestBodyFormat: query', () => {
  const options = (): oidc.CustomFetchOptions =>
    ({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: 'c d', client_id: 'id', client_secret: 's' }),
      redirect: 'manual',
    }) as unknown as oidc.CustomFetchOptions;

  it("moves the parameters into the URL's query and sends no body", () => {
    const [url, init] = encodeTokenRequest(
      { tokenRequestBodyFormat: 'query' } as ProviderSpec,
      'https://auth.example.com/oauth/token',
      options(),
    );
    const sent = new URL(url);
    expect(sent.origin + sent.pathname).toBe('https://auth.example.com/oauth/token');
    expect(Object.fromEntries(sent.searchParams)).toEqual({
      grant_type: 'authorization_code',
      code: 'c d',
      client_id: 'id',
      client_secret: 's',
    });
    expect(init.body).toBeUndefined();
    expect(new Headers(init.headers).get('content-type')).toBeNull();
    expect(new Headers(init.headers).get('accept')).toBe('application/json');
  });

  it('leaves a form request as it is', () => {
    const given = options();
    const [url, init] = encodeTokenRequest({} as ProviderSpec, 'https://auth.example.com/oauth/token', given);
    expect(url).toBe('https://auth.example.com/oauth/token');
    expect(init.body).toBe(given.body);
  });
});
