/**
 * Token answers as providers send them (src/auth/provider-answers.ts): the shapes read without declaring
 * anything, the Provider's `tokenResponse`, and the values taken into connection configuration.
 */
import {
  configValue,
  parseAnswerBody,
  readTokenAnswer,
  tokenExpiresAt,
  valueAt,
  valuesFromAnswers,
} from '../../src/auth/provider-answers.js';
import { oauth2 } from '../../src/modes/oauth2/mode.js';
import type { ProviderSpec } from '../../src/k8s/resources.js';
import { readCatalog } from '../support/catalog-files.js';

describe('token answers', () => {
  it('reads JSON, a form-encoded answer and a JSON body sent as text/plain; refuses what is neither', () => {
    expect(parseAnswerBody('{"access_token":"a"}', 'application/json; charset=utf-8')).toEqual({ access_token: 'a' });
    expect(parseAnswerBody('access_token=a&token_type=bearer&expires_in=60', 'application/x-www-form-urlencoded')).toEqual({
      access_token: 'a',
      token_type: 'bearer',
      expires_in: '60',
    });
    expect(parseAnswerBody('{"access_token":"a"}', 'text/plain')).toEqual({ access_token: 'a' });
    expect(parseAnswerBody('<html>maintenance</html>', 'text/html')).toBeUndefined();
    expect(parseAnswerBody('hello world', 'text/plain')).toBeUndefined();
    expect(parseAnswerBody('[1,2]', 'application/json')).toBeUndefined();
  });

  it('keeps any token_type in the original and reads it as bearer; expires_in as a string, absent or not a number', () => {
    const read = readTokenAnswer(undefined, { access_token: 'x', token_type: 'bot', expires_in: '3600', id_token: 'j.w.t' });
    expect(read).toEqual({
      kind: 'tokens',
      original: { access_token: 'x', token_type: 'bot', expires_in: '3600', id_token: 'j.w.t' },
      fields: { access_token: 'x', token_type: 'bearer', expires_in: 3600 },
    });
    expect(readTokenAnswer(undefined, { access_token: 'x', token_type: 'DPoP' })).toMatchObject({ fields: { token_type: 'DPoP' } });
    expect(readTokenAnswer(undefined, { access_token: 'x' })).toMatchObject({ fields: { token_type: 'bearer' } });
    expect(readTokenAnswer(undefined, { access_token: 'x', expires_in: 'soon' })).toEqual({
      kind: 'tokens',
      original: { access_token: 'x', expires_in: 'soon' },
      fields: { access_token: 'x', token_type: 'bearer' },
    });
  });

  it("reads Slack's ok:false as an error with its code, and a token nested under tokenPath (or at the top when it is there)", () => {
    const slack = { errorWhen: { path: 'ok', equals: false }, errorCodePath: 'error', tokenPath: 'authed_user' };
    expect(readTokenAnswer(slack, { ok: false, error: 'invalid_code' })).toEqual({ kind: 'error', error: 'invalid_code' });
    expect(readTokenAnswer({ errorWhen: { path: 'ok', equals: false } }, { ok: false })).toEqual({
      kind: 'error',
      error: 'invalid_request',
    });
    const answer = {
      ok: true,
      access_token: 'xoxb',
      token_type: 'bot',
      authed_user: { id: 'U1', access_token: 'xoxp', token_type: 'user' },
    };
    expect(readTokenAnswer(slack, answer)).toEqual({
      kind: 'tokens',
      original: answer,
      fields: { id: 'U1', access_token: 'xoxp', token_type: 'bearer' },
    });
    // A user token refresh answers at the top level.
    expect(readTokenAnswer(slack, { ok: true, access_token: 'xoxe.xoxp', token_type: 'user' })).toMatchObject({
      fields: { access_token: 'xoxe.xoxp', token_type: 'bearer' },
    });
  });
});

describe("an envelope whose code other than 0 is an error (TikTok's Marketing API, the shipped manifest)", () => {
  const tiktok = readCatalog().find((m) => m.metadata.name === 'tiktok-ads')!.spec.tokenResponse;

  it('reads the token under data when code is 0', () => {
    const answer = { code: 0, message: 'OK', request_id: 'r1', data: { access_token: 'at-1' } };
    expect(readTokenAnswer(tiktok, answer)).toEqual({
      kind: 'tokens',
      original: answer,
      fields: { access_token: 'at-1', token_type: 'bearer' },
    });
  });

  it('reads any other code, or none, as an error with its code and message, even in a 200 answer', () => {
    expect(readTokenAnswer(tiktok, { code: 40002, message: 'Auth code expired', request_id: 'r2', data: {} })).toEqual({
      kind: 'error',
      error: '40002',
      description: 'Auth code expired',
    });
    // No code at all is not success either (the SDK tests code === 0).
    expect(readTokenAnswer(tiktok, { data: { access_token: 'at-2' } })).toEqual({ kind: 'error', error: 'invalid_request' });
  });

  it('notEquals compares the value as it is (0 is not "0")', () => {
    const spec = { errorWhen: { path: 'status', notEquals: 'ok' } };
    expect(readTokenAnswer(spec, { status: 'ok', access_token: 'a' })).toMatchObject({ kind: 'tokens' });
    expect(readTokenAnswer(spec, { status: 'failed', access_token: 'a' })).toMatchObject({ kind: 'error' });
    expect(readTokenAnswer({ errorWhen: { path: 'code', notEquals: 0 } }, { code: '0', access_token: 'a' })).toMatchObject({
      kind: 'error',
    });
  });
});

describe('scope and expires_in as some providers send them', () => {
  it('drops a scope that is not a string from the fields openid-client checks, and keeps it in the original', () => {
    const linear = { access_token: 'x', scope: ['read', 'write'] };
    expect(readTokenAnswer(undefined, linear)).toEqual({
      kind: 'tokens',
      original: linear,
      fields: { access_token: 'x', token_type: 'bearer' },
    });
    expect(readTokenAnswer(undefined, { access_token: 'x', scope: null })).toMatchObject({
      fields: { access_token: 'x', token_type: 'bearer' },
    });
    expect(readTokenAnswer(undefined, { access_token: 'x', scope: 'a b' })).toMatchObject({ fields: { scope: 'a b' } });
  });

  it('reads expires_in 0 as never expiring only when the Provider declares it (Mailchimp)', () => {
    const mailchimp = { access_token: 'x', expires_in: 0, scope: null };
    expect(readTokenAnswer({ expiresInZeroMeansNever: true }, mailchimp)).toEqual({
      kind: 'tokens',
      original: mailchimp,
      fields: { access_token: 'x', token_type: 'bearer' },
    });
    expect(readTokenAnswer({ expiresInZeroMeansNever: true }, { access_token: 'x', expires_in: '0' })).toEqual({
      kind: 'tokens',
      original: { access_token: 'x', expires_in: '0' },
      fields: { access_token: 'x', token_type: 'bearer' },
    });
    expect(readTokenAnswer(undefined, mailchimp)).toMatchObject({ fields: { expires_in: 0 } });
    expect(readTokenAnswer({ expiresInZeroMeansNever: true }, { access_token: 'x', expires_in: 60 })).toMatchObject({
      fields: { expires_in: 60 },
    });
  });
});

describe('an expiry time instead of a lifetime (tokenResponse.expiresAtPath)', () => {
  const now = Date.parse('2026-12-06T14:00:00Z');
  // Clover's answer (https://docs.clover.com/dev/docs/refresh-access-tokens): expirations as Unix timestamps.
  const clover = { access_token: 'a', access_token_expiration: 1796567400, refresh_token: 'r', refresh_token_expiration: 1828103400 };
  const spec = { expiresAtPath: 'access_token_expiration' };

  it("reads Clover's access_token_expiration (Unix seconds) as the token's expiry", () => {
    expect(tokenExpiresAt(spec, clover, undefined, now)).toBe('2026-12-06T14:30:00.000Z');
    // Read before a lifetime the answer might also carry.
    expect(tokenExpiresAt(spec, { ...clover, expires_in: 60 }, 60, now)).toBe('2026-12-06T14:30:00.000Z');
  });

  it('reads epoch milliseconds, a numeric string and ISO 8601, at a dotted path', () => {
    expect(tokenExpiresAt(spec, { access_token_expiration: 1796567400123 }, undefined, now)).toBe('2026-12-06T14:30:00.123Z');
    expect(tokenExpiresAt(spec, { access_token_expiration: '1796567400' }, undefined, now)).toBe('2026-12-06T14:30:00.000Z');
    expect(tokenExpiresAt({ expiresAtPath: 'token.expires' }, { token: { expires: '2026-12-06T15:00:00Z' } }, undefined, now)).toBe(
      '2026-12-06T15:00:00.000Z',
    );
  });

  it('falls back to expires_in where the path gives no time, and gives none without either', () => {
    expect(tokenExpiresAt(spec, { access_token_expiration: 'soon' }, 3600, now)).toBe('2026-12-06T15:00:00.000Z');
    expect(tokenExpiresAt(spec, { access_token_expiration: -5 }, undefined, now)).toBeUndefined();
    expect(tokenExpiresAt(spec, { access_token_expiration: { at: 1 } }, undefined, now)).toBeUndefined();
    expect(tokenExpiresAt(spec, {}, undefined, now)).toBeUndefined();
    // Without the declaration the field is not read: only expires_in counts (RFC 6749).
    expect(tokenExpiresAt(undefined, clover, undefined, now)).toBeUndefined();
    expect(tokenExpiresAt(undefined, clover, 3600, now)).toBe('2026-12-06T15:00:00.000Z');
  });
});

describe('an RFC 6749 error answer sent with a 2xx', () => {
  it('is an error with its code when it has a string error and no access_token (GitHub OAuth Apps, Zoho)', () => {
    expect(readTokenAnswer(undefined, { error: 'bad_verification_code', error_description: 'expired', error_uri: 'https://x' })).toEqual({
      kind: 'error',
      error: 'bad_verification_code',
      description: 'expired',
    });
    expect(readTokenAnswer(undefined, { error: 'invalid_code' })).toEqual({ kind: 'error', error: 'invalid_code' });
    // A token that also names an error field is still a token.
    expect(readTokenAnswer(undefined, { access_token: 'x', error: 'ignored' })).toMatchObject({ kind: 'tokens' });
  });
});

describe('values from the answers', () => {
  const spec: Pick<ProviderSpec, 'connectionConfiguration'> = {
    connectionConfiguration: [
      { name: 'instanceHost', hostSuffixes: ['salesforce.com'], from: { tokenResponse: 'instance_url', as: 'host' } },
      { name: 'teamId', from: { tokenResponse: 'team.id' } },
      { name: 'first', from: { tokenResponse: 'accounts.0.id' } },
      { name: 'realmId', from: { callback: 'realmId' } },
      { name: 'cloudId', from: { step: 'sites', path: 'id' } },
      { name: 'subdomain' },
    ],
  };

  it('takes paths of the token answer (host of a URL, nested, array index) and callback parameters; keeps what is given', () => {
    const tokenAnswer = { instance_url: 'https://acme.my.salesforce.com', team: { id: 'T1' }, accounts: [{ id: 7 }] };
    const callbackQuery = new URLSearchParams({ realmId: '123', code: 'c' });
    expect(valuesFromAnswers(spec, { tokenAnswer, callbackQuery }, {})).toEqual({
      instanceHost: 'acme.my.salesforce.com',
      teamId: 'T1',
      first: '7',
      realmId: '123',
    });
    expect(valuesFromAnswers(spec, { tokenAnswer, callbackQuery }, { teamId: 'given' })).not.toHaveProperty('teamId');
    expect(valuesFromAnswers(spec, { tokenAnswer: {} }, {})).toEqual({});
  });

  it('reads paths without reaching into prototypes', () => {
    expect(valueAt({ a: { b: [1, { c: 'x' }] } }, 'a.b.1.c')).toBe('x');
    expect(valueAt({}, 'constructor')).toBeUndefined();
    expect(valueAt({ a: 1 }, 'a.b')).toBeUndefined();
    expect(valueAt([5], '')).toEqual([5]);
  });

  it('as host keeps the host of a URL, a bare host stays, objects are no value', () => {
    expect(configValue('https://na3.docusign.net/restapi', 'host')).toBe('na3.docusign.net');
    expect(configValue('na3.docusign.net', 'host')).toBe('na3.docusign.net');
    expect(configValue('https://acme.pipedrive.com', 'subdomain')).toBe('acme');
    expect(configValue({ host: 'x' }, undefined)).toBeUndefined();
    expect(configValue('', undefined)).toBeUndefined();
  });
});

describe('from.match', () => {
  const zoho = '^accounts\\.zoho(?:cloud)?\\.(.+)$';
  it('keeps the first group of a match after as (or the whole match); no match is no value', () => {
    expect(configValue('https://accounts.zoho.eu', 'host', zoho)).toBe('eu');
    expect(configValue('https://accounts.zoho.com.au', 'host', zoho)).toBe('com.au');
    expect(configValue('https://accounts.zohocloud.ca', 'host', zoho)).toBe('ca');
    expect(configValue('https://accounts.zoho.eu.evil.example/x', undefined, zoho)).toBeUndefined();
    expect(configValue('https://evil.example', 'host', zoho)).toBeUndefined();
    expect(configValue('us-east-1.api.example.com', undefined, '^[a-z]+-[a-z]+-[0-9]')).toBe('us-east-1');
    expect(configValue('x', undefined, '(')).toBeUndefined();
  });

  it("gives the shipped Zoho providers their accounts server (and product hosts' Zoho domain) from the redirect's accounts-server", () => {
    const manifests = readCatalog().filter((m) => m.metadata.name.startsWith('zoho-'));
    expect(manifests.length).toBeGreaterThanOrEqual(10);
    for (const m of manifests) {
      const query = (server: string) => ({ callbackQuery: new URLSearchParams({ location: 'x', 'accounts-server': server }) });
      const ownHost = (m.spec.connectionConfiguration ?? []).some((f) => typeof f !== 'string' && f.name === 'zohoDomain');
      expect([m.metadata.name, valuesFromAnswers(m.spec, query('https://accounts.zoho.com.au'), {})]).toEqual([
        m.metadata.name,
        { accountsServer: 'accounts.zoho.com.au', ...(ownHost ? { zohoDomain: 'zoho.com.au' } : {}) },
      ]);
      expect(valuesFromAnswers(m.spec, query('https://login.example.net'), {})).toEqual({ accountsServer: 'login.example.net' });
    }
  });
});

describe('the OAUTH2 mode', () => {
  const base: ProviderSpec = { displayName: 'X', authMode: 'OAUTH2', authorizationUrl: 'https://a/', tokenUrl: 'https://a/t' };
  it('never asks the end user for a value the provider returns', () => {
    const flow = oauth2.connect;
    expect(flow.flow).toBe('redirect');
    if (flow.flow !== 'redirect') return;
    const supplied = flow.suppliedKeys({ ...base, connectionConfiguration: [{ name: 'a', from: { callback: 'a' } }, { name: 'b' }] });
    expect([...supplied]).toEqual(['a']);
  });

  it('reports a from.match that is not a regular expression and a pick.equals that is not a scalar', () => {
    expect(oauth2.providerProblems({ ...base, connectionConfiguration: [{ name: 'a', from: { callback: 'a', match: '(' } }] })).toEqual([
      'spec.connectionConfiguration a: from.match is not a valid regular expression',
    ]);
    const step = { name: 's', url: 'https://a/s', items: '', pick: { path: 'p', equals: [] as never } };
    expect(oauth2.providerProblems({ ...base, postConnection: { name: 'x', steps: [step] } })).toEqual([
      'spec.postConnection.steps[0].pick.equals must be a string, a number or a boolean',
    ]);
  });

  it('reports an errorWhen.equals that is not a string, a number or a boolean (the CRD cannot)', () => {
    expect(oauth2.providerProblems({ ...base, tokenResponse: { errorWhen: { path: 'ok', equals: false } } })).toEqual([]);
    expect(oauth2.providerProblems({ ...base, tokenResponse: { errorWhen: { path: 'ok', equals: {} as never } } })).toEqual([
      'spec.tokenResponse.errorWhen.equals must be a string, a number or a boolean',
    ]);
    expect(oauth2.providerProblems({ ...base, tokenResponse: { errorWhen: { path: 'code', notEquals: 0 } } })).toEqual([]);
    expect(oauth2.providerProblems({ ...base, tokenResponse: { errorWhen: { path: 'code', notEquals: [0] as never } } })).toEqual([
      'spec.tokenResponse.errorWhen.notEquals must be a string, a number or a boolean',
    ]);
    expect(oauth2.providerProblems({ ...base, tokenResponse: { errorWhen: { path: 'code', equals: 1, notEquals: 0 } } })).toEqual([
      'spec.tokenResponse.errorWhen takes equals or notEquals, not both',
    ]);
    expect(oauth2.providerProblems({ ...base, tokenResponse: { errorWhen: { path: 'code' } } })).toEqual([
      'spec.tokenResponse.errorWhen needs equals or notEquals',
    ]);
  });
});
