/**
 * The authorization request and code exchange in the shapes a Provider declares (src/auth/oauth2-authorization.ts):
 * parameters its authorization URL does not take (`authorizationOmits`), a code under another callback parameter
 * (`callbackCodeParam`), a public client (`tokenRequestAuthMethod: none`), a redirect URI that is a registered
 * name (`redirectUriIsName`), and parameters under the provider's own names (`authorizationParamNames`,
 * `tokenRequestParamNames`, `tokenRequestOmits`: the shipped TikTok Ads manifest). The token endpoint is a function handed in as `fetch` (dependency injection); the
 * round trips against doc-true simulators in Chromium are in test/providers/real-providers.test.ts.
 */
import { buildAuthorizationRedirect, exchangeAuthorizationCode, type OAuth2FlowInput } from '../../src/auth/oauth2-authorization.js';
import type { IntegrationSpec, ProviderSpec } from '../../src/k8s/resources.js';
import { catalogSpec } from '../support/catalog-files.js';

const resource = <S>(name: string, spec: S) => ({ apiVersion: 'latchkey.dev/v1alpha1', kind: 'X', metadata: { name }, spec });

/** A token endpoint that records what it was sent and answers tokens. */
function tokenEndpoint() {
  const sent: Array<{ headers: Headers; body: URLSearchParams }> = [];
  const fetch = (async (_url: string | URL | Request, init?: RequestInit) => {
    sent.push({ headers: new Headers(init?.headers), body: new URLSearchParams(String(init?.body ?? '')) });
    return new Response(JSON.stringify({ access_token: 'at', token_type: 'bearer', expires_in: 3600, refresh_token: 'rt' }), {
      headers: { 'content-type': 'application/json' },
    });
  }) as typeof globalThis.fetch;
  return { sent, fetch };
}

function flow(spec: Partial<ProviderSpec>, integration: Partial<IntegrationSpec> = {}, fetch = tokenEndpoint().fetch): OAuth2FlowInput {
  return {
    provider: resource('acme', {
      displayName: 'Acme',
      authMode: 'OAUTH2',
      authorizationUrl: 'https://id.example.test/consent',
      tokenUrl: 'https://id.example.test/token',
      ...spec,
    }) as OAuth2FlowInput['provider'],
    integration: resource('acme', { provider: 'acme', ...integration }) as OAuth2FlowInput['integration'],
    client: { clientId: 'client-1', clientSecret: 'secret-1' },
    connectionConfig: {},
    fetch,
  };
}

describe('the authorization request', () => {
  it('leaves out the RFC 6749 parameters the provider does not take, and sends the Integration its own (Amazon Selling Partner)', async () => {
    const url = await buildAuthorizationRedirect(
      flow({ authorizationOmits: ['client_id', 'response_type'], disablePkce: true }, { authorizationParams: { application_id: 'app-1' } }),
      { redirectUri: 'https://latchkey.example.test/oauth/callback', state: 'st' },
    );
    expect(Object.fromEntries(url.searchParams)).toEqual({
      application_id: 'app-1',
      redirect_uri: 'https://latchkey.example.test/oauth/callback',
      state: 'st',
    });
  });

  it('keeps client_id and response_type otherwise', async () => {
    const url = await buildAuthorizationRedirect(flow({}), { redirectUri: 'https://latchkey.example.test/cb', state: 'st' });
    expect(url.searchParams.get('client_id')).toBe('client-1');
    expect(url.searchParams.get('response_type')).toBe('code');
  });
});

describe('the code exchange', () => {
  const callback = 'https://latchkey.example.test/oauth/callback';

  it('exchanges the code of the parameter the provider names (spapi_oauth_code) as RFC 6749 code', async () => {
    const endpoint = tokenEndpoint();
    const input = flow({ callbackCodeParam: 'spapi_oauth_code' }, {}, endpoint.fetch);
    const at = new URL(`${callback}?state=st&selling_partner_id=A3FH&spapi_oauth_code=the-code`);
    const tokens = await exchangeAuthorizationCode(input, at, { redirectUri: callback, expectedState: 'st' }, 0);
    expect(tokens.access_token).toBe('at');
    expect(endpoint.sent[0]!.body.get('code')).toBe('the-code');
    expect(endpoint.sent[0]!.body.get('redirect_uri')).toBe(callback);
  });

  it('takes no code from a `code` parameter when the provider names another', async () => {
    const input = flow({ callbackCodeParam: 'spapi_oauth_code' });
    const at = new URL(`${callback}?state=st&code=not-the-code`);
    await expect(exchangeAuthorizationCode(input, at, { redirectUri: callback, expectedState: 'st' }, 0)).rejects.toThrow();
  });

  it('a public client sends its client_id and never the secret (tokenRequestAuthMethod: none)', async () => {
    const endpoint = tokenEndpoint();
    const input = flow({ tokenRequestAuthMethod: 'none' }, {}, endpoint.fetch);
    await exchangeAuthorizationCode(
      input,
      new URL(`${callback}?state=st&code=c`),
      { redirectUri: callback, expectedState: 'st', codeVerifier: 'v'.repeat(43) },
      0,
    );
    const { headers, body } = endpoint.sent[0]!;
    expect(headers.get('authorization')).toBeNull();
    expect(body.get('client_id')).toBe('client-1');
    expect(body.has('client_secret')).toBe(false);
    expect(body.get('code_verifier')).toBe('v'.repeat(43));
  });

  it("sends the Integration's registered name as redirect_uri, at authorization and in the token request (eBay's RuName)", async () => {
    const endpoint = tokenEndpoint();
    const input = flow(
      { redirectUriIsName: true, tokenRequestAuthMethod: 'basic' },
      { redirectUriName: 'Acme_Inc-AcmeInc-AcmeAp-abcd' },
      endpoint.fetch,
    );
    const url = await buildAuthorizationRedirect(input, { redirectUri: callback, state: 'st' });
    expect(url.searchParams.get('redirect_uri')).toBe('Acme_Inc-AcmeInc-AcmeAp-abcd');
    await exchangeAuthorizationCode(input, new URL(`${callback}?state=st&code=c`), { redirectUri: callback, expectedState: 'st' }, 0);
    expect(endpoint.sent[0]!.body.get('redirect_uri')).toBe('Acme_Inc-AcmeInc-AcmeAp-abcd');
  });

  it('refuses to start without the name when the provider needs one', async () => {
    await expect(
      buildAuthorizationRedirect(flow({ redirectUriIsName: true }), { redirectUri: callback, state: 'st' }),
    ).rejects.toMatchObject({ kind: 'conflict', code: 'integration_not_configured' });
  });
});

describe("parameters under the provider's own names (the shipped TikTok Ads manifest, as TikTok's SDK sends them)", () => {
  const callback = 'https://latchkey.example.test/oauth/callback';
  const tiktok = catalogSpec('tiktok-ads');

  it('names the client app_id on the consent URL, with state and redirect_uri and nothing TikTok does not take', async () => {
    const url = await buildAuthorizationRedirect(flow(tiktok), { redirectUri: callback, state: 'st', codeVerifier: 'v'.repeat(43) });
    expect(url.origin + url.pathname).toBe('https://business-api.tiktok.com/portal/auth');
    expect(Object.fromEntries(url.searchParams)).toEqual({ app_id: 'client-1', redirect_uri: callback, state: 'st' });
  });

  it('exchanges auth_code as the JSON object {app_id, secret, auth_code}, and reads the token under data', async () => {
    const sent: Array<{ url: string; headers: Headers; body: string }> = [];
    const fetch = (async (url: string | URL | Request, init?: RequestInit) => {
      sent.push({ url: String(url), headers: new Headers(init?.headers), body: String(init?.body ?? '') });
      return new Response(JSON.stringify({ code: 0, message: 'OK', request_id: 'r1', data: { access_token: 'long-term' } }), {
        headers: { 'content-type': 'application/json' },
      });
    }) as typeof globalThis.fetch;
    const tokens = await exchangeAuthorizationCode(
      flow(tiktok, {}, fetch),
      new URL(`${callback}?auth_code=the-code&state=st`),
      { redirectUri: callback, expectedState: 'st' },
      0,
    );
    expect(tokens).toMatchObject({ access_token: 'long-term', raw: { code: 0, data: { access_token: 'long-term' } } });
    expect(tokens).not.toHaveProperty('refresh_token');
    expect(tokens).not.toHaveProperty('expires_at');
    expect(sent[0]!.url).toBe('https://business-api.tiktok.com/open_api/v1.3/oauth2/access_token/');
    expect(sent[0]!.headers.get('content-type')).toBe('application/json');
    expect(sent[0]!.headers.get('authorization')).toBeNull();
    expect(JSON.parse(sent[0]!.body)).toEqual({ app_id: 'client-1', secret: 'secret-1', auth_code: 'the-code' });
  });

  it("fails the exchange on a code other than 0 in a 200 answer, with TikTok's code and message", async () => {
    const fetch = (async () =>
      new Response(JSON.stringify({ code: 40002, message: 'Auth code expired', request_id: 'r2', data: {} }), {
        headers: { 'content-type': 'application/json' },
      })) as typeof globalThis.fetch;
    await expect(
      exchangeAuthorizationCode(
        flow(tiktok, {}, fetch),
        new URL(`${callback}?auth_code=c&state=st`),
        { redirectUri: callback, expectedState: 'st' },
        0,
      ),
    ).rejects.toMatchObject({ error: '40002', error_description: 'Auth code expired' });
  });
});
