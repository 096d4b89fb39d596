/**
 * The credentials' stored form: each token once (the provider's answer in `raw` no longer repeats the
 * tokens kept at the top), read back to exactly what was written, key order included; a Secret
 * written before (tokens in `raw`) reads as it is; a reference that no longer fits its `raw` is dropped.
 */
import { fromStoredForm, RAW_REFS, toStoredForm } from '../../src/k8s/stored-credentials.js';

const access = 'ya29.a0AfB_byC-access-token-of-180-characters-'.padEnd(180, 'x');
const refresh = '1//0g-refresh-token-'.padEnd(100, 'y');

const oauth2 = () => ({
  type: 'OAUTH2',
  access_token: access,
  refresh_token: refresh,
  expires_at: '2026-11-27T15:00:00.000Z',
  raw: { access_token: access, expires_in: 3599, refresh_token: refresh, scope: 'openid email', token_type: 'Bearer' },
});

/** Through JSON both ways, as the Secret holds it. */
const roundTrip = <T extends object>(c: T): T => fromStoredForm(JSON.parse(JSON.stringify(toStoredForm(c))) as T);

describe('stored credentials', () => {
  it('stores an OAuth 2 answer’s tokens once and reads back the same JSON text', () => {
    const written = oauth2();
    const stored = toStoredForm(written);
    expect(stored.raw).toEqual({ expires_in: 3599, scope: 'openid email', token_type: 'Bearer' });
    expect(stored).toMatchObject({ access_token: access, refresh_token: refresh, [RAW_REFS]: { access_token: 0, refresh_token: 2 } });
    expect(JSON.stringify(stored).split(access)).toHaveLength(2);
    // 280 bytes of tokens out, about 50 of references in.
    expect(JSON.stringify(stored).length).toBeLessThan(JSON.stringify(written).length - 250);
    // Byte-identical: the fetch answer serializes what is read.
    expect(JSON.stringify(roundTrip(written))).toBe(JSON.stringify(written));
    expect(written.raw.access_token).toBe(access); // the caller's object is not changed
  });

  it('reads a Secret written before (tokens in raw, no references) as it is', () => {
    const old = oauth2();
    expect(JSON.stringify(fromStoredForm(JSON.parse(JSON.stringify(old)) as object))).toBe(JSON.stringify(old));
  });

  it('refers to a top-level field of another name (client credentials: `token` at the top, `access_token` in raw)', () => {
    const cc = {
      type: 'OAUTH2_CC',
      token: access,
      client_id: 'cid',
      client_secret: 'a-client-secret-value',
      raw: { token_type: 'Bearer', access_token: access },
    };
    const stored = toStoredForm(cc);
    expect(stored).toMatchObject({ raw: { token_type: 'Bearer' }, [RAW_REFS]: { access_token: [1, 'token'] } });
    expect(JSON.stringify(roundTrip(cc))).toBe(JSON.stringify(cc));
  });

  it('shares the tokens of a CUSTOM connection’s user token too', () => {
    const custom = {
      type: 'CUSTOM',
      access_token: 'ghs_installation-token-0001',
      raw: { token: 'ghs_installation-token-0001', expires_at: '2026-11-27T15:00:00Z' },
      user: { access_token: access, refresh_token: refresh, raw: { access_token: access, refresh_token: refresh, expires_in: 28800 } },
    };
    const stored = toStoredForm(custom);
    expect(stored.raw).toEqual({ expires_at: '2026-11-27T15:00:00Z' });
    expect(stored.user.raw).toEqual({ expires_in: 28800 });
    expect(JSON.stringify(roundTrip(custom))).toBe(JSON.stringify(custom));
  });

  it('leaves short values, other types and credentials without raw as they are', () => {
    const keyed = { type: 'API_KEY', apiKey: 'sk_live_0123456789abcdef' };
    expect(toStoredForm(keyed)).toBe(keyed);
    const short = { type: 'OAUTH2', access_token: 'a1', raw: { access_token: 'a1' } };
    expect(toStoredForm(short)).toBe(short);
    const numbers = { type: 'OAUTH2', access_token: access, raw: { expires_in: 3600, nested: { access_token: access } } };
    expect(toStoredForm(numbers)).toBe(numbers);
    expect(JSON.stringify(roundTrip(short))).toBe(JSON.stringify(short));
  });

  it('drops a reference that no longer fits: a previous release replaced raw and kept the other fields', () => {
    const stored = JSON.parse(JSON.stringify(toStoredForm(oauth2()))) as ReturnType<typeof oauth2>;
    // The previous release's refresh: a new answer without a new refresh token, the reference kept.
    const rewritten = {
      ...stored,
      access_token: 'new-access-token-0002',
      raw: { access_token: 'new-access-token-0002', expires_in: 3599 },
    };
    expect(fromStoredForm(rewritten)).toEqual({
      type: 'OAUTH2',
      access_token: 'new-access-token-0002',
      refresh_token: refresh,
      expires_at: '2026-11-27T15:00:00.000Z',
      raw: { access_token: 'new-access-token-0002', expires_in: 3599 },
    });
  });

  it('leaves out a value whose top-level field is gone, and keeps a field of that name that is not a reference', () => {
    const stored = JSON.parse(JSON.stringify(toStoredForm(oauth2()))) as Record<string, unknown>;
    delete stored.refresh_token;
    const { refresh_token: _r, ...rest } = oauth2();
    expect(JSON.stringify(fromStoredForm(stored))).toBe(
      JSON.stringify({ ...rest, raw: { access_token: access, expires_in: 3599, scope: 'openid email', token_type: 'Bearer' } }),
    );
    // TWO_STEP keeps the end user's own fields at the top: one may have that name.
    const twoStep = { type: 'TWO_STEP', [RAW_REFS]: 'an end user’s value', token: access, raw: { token: access } };
    expect(JSON.stringify(roundTrip(twoStep))).toBe(JSON.stringify(twoStep));
  });

  it('keeps a provider answer’s odd keys (`__proto__`) as keys', () => {
    const odd = JSON.parse(`{"type":"OAUTH2","access_token":"${access}","raw":{"__proto__":{"x":1},"access_token":"${access}"}}`) as object;
    const stored = toStoredForm(odd) as { raw: object };
    expect(Object.keys(stored.raw)).toEqual(['__proto__']);
    expect(JSON.stringify(roundTrip(odd))).toBe(JSON.stringify(odd));
  });
});
