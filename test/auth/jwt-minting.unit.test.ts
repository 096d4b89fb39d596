/**
 * JWT minting (src/modes/shared/jwt-minting.ts) with the catalog's own modeOptions for Ghost (HS256, hex
 * secret) and App Store Connect (ES256, .p8 key). Every token is checked twice: here with node:crypto,
 * and by an independent implementation, PyJWT (Debian's python3-jwt, a dependency of the
 * python3-oauthlib the OAuth 1 tests already need), which verifies signature, audience and expiry.
 */
import { execFileSync } from 'node:child_process';
import { createHmac, generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAllYaml } from '@kubernetes/client-node';
import {
  checkSigningKey,
  jwtMintingStrategy,
  jwtModeOptions,
  JwtMintError,
  mintJwt,
  mintJwtCredentials,
} from '../../src/modes/shared/jwt-minting.js';
import { RefreshError, type StrategyInput } from '../../src/auth/refresh/token-refresher.js';
import { lifetimeSecondsOf, StoredCredentialsSchema } from '../../src/domain/credentials.js';
import type { ProviderResource, ProviderSpec } from '../../src/k8s/resources.js';
import { REPO_ROOT } from '../../dev/control-plane.js';
import { ASC_ISSUER, ASC_KEY_ID, ASC_P8 as p8, ascKeyPair as ec, GHOST_ID, GHOST_SECRET } from '../support/jwt-keys.js';

const catalogSpec = (name: string) =>
  (loadAllYaml(readFileSync(join(REPO_ROOT, 'config/providers', `${name}.yaml`), 'utf8'))[0] as { spec: ProviderSpec }).spec;
const ghost = catalogSpec('ghost-admin');
const appStore = catalogSpec('app-store-connect');

function decode(token: string): { header: Record<string, unknown>; claims: Record<string, unknown>; input: Buffer; signature: Buffer } {
  const [h, p, s] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(h!, 'base64url').toString()) as Record<string, unknown>,
    claims: JSON.parse(Buffer.from(p!, 'base64url').toString()) as Record<string, unknown>,
    input: Buffer.from(`${h}.${p}`),
    signature: Buffer.from(s!, 'base64url'),
  };
}

function verifyEs256(token: string, key: KeyObject): boolean {
  const d = decode(token);
  return d.signature.length === 64 && verify('sha256', d.input, { key, dsaEncoding: 'ieee-p1363' }, d.signature);
}

/** PyJWT's verdict on each token: the claims it accepted, or the error it raised. */
function pyjwt(
  checks: Array<{ token: string; key: string; keyEncoding: 'hex' | 'pem'; alg: string; aud: string }>,
): Array<{ ok: boolean; claims?: Record<string, unknown>; header?: Record<string, unknown>; error?: string }> {
  const script = `
import json, sys, jwt
out = []
for c in json.load(sys.stdin):
    key = bytes.fromhex(c['key']) if c['keyEncoding'] == 'hex' else c['key']
    try:
        claims = jwt.decode(c['token'], key, algorithms=[c['alg']], audience=c['aud'], options={'require': ['exp', 'iat']})
        out.append({'ok': True, 'claims': claims, 'header': jwt.get_unverified_header(c['token'])})
    except Exception as e:
        out.append({'ok': False, 'error': type(e).__name__})
print(json.dumps(out))
`;
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', script], { input: JSON.stringify(checks), encoding: 'utf8' })) as ReturnType<
    typeof pyjwt
  >;
}

describe('JWT minting', () => {
  const now = Date.now();

  it('mints the Ghost Admin API token: HS256 over the hex-decoded secret, kid = key ID, aud /admin/, 5 minutes', () => {
    const { token, expiresAt } = mintJwt({
      modeOptions: ghost.modeOptions,
      apiKey: GHOST_SECRET,
      connectionConfig: { keyId: GHOST_ID, adminDomain: 'example.ghost.io' },
      now,
    });
    const d = decode(token);
    expect(d.header).toEqual({ alg: 'HS256', typ: 'JWT', kid: GHOST_ID });
    const iat = Math.floor(now / 1000);
    expect(d.claims).toEqual({ aud: '/admin/', iat, exp: iat + 300 });
    expect(expiresAt).toBe(new Date((iat + 300) * 1000).toISOString());
    expect(d.signature.equals(createHmac('sha256', Buffer.from(GHOST_SECRET, 'hex')).update(d.input).digest())).toBe(true);
    // Signed with the hex text itself instead of its bytes would be a different (wrong) signature.
    expect(d.signature.equals(createHmac('sha256', GHOST_SECRET).update(d.input).digest())).toBe(false);
  });

  it('mints the App Store Connect token: ES256 (r||s) with the .p8 key, kid, iss = issuer ID, aud appstoreconnect-v1, under 20 minutes', () => {
    const { token } = mintJwt({
      modeOptions: appStore.modeOptions,
      apiKey: p8,
      connectionConfig: { keyId: ASC_KEY_ID, issuerId: ASC_ISSUER },
      now,
    });
    const d = decode(token);
    expect(d.header).toEqual({ alg: 'ES256', typ: 'JWT', kid: ASC_KEY_ID });
    const iat = Math.floor(now / 1000);
    expect(d.claims).toMatchObject({ iss: ASC_ISSUER, aud: 'appstoreconnect-v1', iat });
    expect((d.claims.exp as number) - iat).toBeLessThanOrEqual(1200);
    expect(verifyEs256(token, ec.publicKey)).toBe(true);
    expect(verifyEs256(token, generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey)).toBe(false);
  });

  it('produces tokens an independent JWT library (PyJWT) accepts, and it rejects a token signed with another key', () => {
    const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const publicPem = ec.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const ghostToken = mintJwt({ modeOptions: ghost.modeOptions, apiKey: GHOST_SECRET, connectionConfig: { keyId: GHOST_ID }, now }).token;
    const ascJwt = (apiKey: string) =>
      mintJwt({ modeOptions: appStore.modeOptions, apiKey, connectionConfig: { keyId: ASC_KEY_ID, issuerId: ASC_ISSUER }, now }).token;
    const ascToken = ascJwt(p8);
    const forged = ascJwt(other);
    const expired = mintJwt({
      modeOptions: ghost.modeOptions,
      apiKey: GHOST_SECRET,
      connectionConfig: { keyId: GHOST_ID },
      now: now - 600_000,
    }).token;
    const [g, a, f, e] = pyjwt([
      { token: ghostToken, key: GHOST_SECRET, keyEncoding: 'hex', alg: 'HS256', aud: '/admin/' },
      { token: ascToken, key: publicPem, keyEncoding: 'pem', alg: 'ES256', aud: 'appstoreconnect-v1' },
      { token: forged, key: publicPem, keyEncoding: 'pem', alg: 'ES256', aud: 'appstoreconnect-v1' },
      { token: expired, key: GHOST_SECRET, keyEncoding: 'hex', alg: 'HS256', aud: '/admin/' },
    ]);
    expect(g).toMatchObject({ ok: true, header: { kid: GHOST_ID, alg: 'HS256' }, claims: { aud: '/admin/' } });
    expect(a).toMatchObject({ ok: true, header: { kid: ASC_KEY_ID, alg: 'ES256' }, claims: { iss: ASC_ISSUER } });
    expect(f).toEqual({ ok: false, error: 'InvalidSignatureError' });
    expect(e).toEqual({ ok: false, error: 'ExpiredSignatureError' });
  });

  it('reads a .p8 key pasted into a one-line field (line breaks lost), written with \\n, or as bare base64', () => {
    const oneLine = p8.replace(/\n/g, '');
    const escaped = p8.replace(/\n/g, '\\n');
    const spaced = p8.replace(/\n/g, ' ');
    const bare = p8.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '');
    const sec1 = ec.privateKey.export({ type: 'sec1', format: 'pem' }).toString();
    for (const apiKey of [oneLine, escaped, spaced, bare, sec1]) {
      const { token } = mintJwt({
        modeOptions: appStore.modeOptions,
        apiKey,
        connectionConfig: { keyId: ASC_KEY_ID, issuerId: ASC_ISSUER },
        now,
      });
      expect(verifyEs256(token, ec.publicKey)).toBe(true);
    }
  });

  it('signs RS256 and HS256 with base64 or utf8 secrets, fills placeholders inside nested claims, and lets no manifest override alg, iat or exp', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rsaPem = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const rs = mintJwt({
      modeOptions: { algorithm: 'RS256', claims: { sub: '${connectionConfig.account}' } },
      apiKey: rsaPem,
      connectionConfig: { account: 'acct-1' },
      now,
    });
    const r = decode(rs.token);
    expect(r.header).toEqual({ alg: 'RS256', typ: 'JWT' });
    expect(verify('sha256', r.input, rsa.publicKey, r.signature)).toBe(true);
    expect(r.claims).toMatchObject({ sub: 'acct-1', exp: Math.floor(now / 1000) + 300 });

    const secret = Buffer.from('0123456789abcdef0123456789abcdef');
    const hs = mintJwt({
      modeOptions: {
        algorithm: 'HS256',
        secretEncoding: 'base64',
        lifetimeSeconds: 60,
        header: { alg: 'none', typ: 'at+jwt' },
        claims: { iat: 1, exp: 2, scope: ['read', '${connectionConfig.extra}'], nested: { org: '${connectionConfig.org}' } },
      },
      apiKey: secret.toString('base64'),
      connectionConfig: { extra: 'write', org: 'o-9' },
      now,
    });
    const h = decode(hs.token);
    expect(h.header).toEqual({ alg: 'HS256', typ: 'at+jwt' });
    const iat = Math.floor(now / 1000);
    expect(h.claims).toEqual({ scope: ['read', 'write'], nested: { org: 'o-9' }, iat, exp: iat + 60 });
    expect(h.signature.equals(createHmac('sha256', secret).update(h.input).digest())).toBe(true);

    const utf8 = decode(mintJwt({ modeOptions: { algorithm: 'HS256' }, apiKey: 'plain text secret', connectionConfig: {}, now }).token);
    expect(utf8.signature.equals(createHmac('sha256', 'plain text secret').update(utf8.input).digest())).toBe(true);
  });

  it('refuses keys that cannot sign, with a message that never contains the key', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const publicOnly = ec.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const encrypted = ec.privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'pw' }).toString();
    const ghostOptions = jwtModeOptions(ghost.modeOptions);
    const ascOptions = jwtModeOptions(appStore.modeOptions);
    const cases: Array<[string, typeof ghostOptions, RegExp]> = [
      [`${GHOST_ID}:${GHOST_SECRET}`, ghostOptions, /colon/],
      ['not-hex-at-all', ghostOptions, /hex-encoded/],
      ['abc', ghostOptions, /hex-encoded/],
      ['   ', ghostOptions, /empty/],
      [rsa, ascOptions, /EC P-256.*rsa key/],
      [p384, ascOptions, /EC P-256.*secp384r1/],
      [publicOnly, ascOptions, /could not be read/],
      [encrypted, ascOptions, /could not be read/],
      ['-----BEGIN PRIVATE KEY-----\nnot base64!\n-----END PRIVATE KEY-----', ascOptions, /could not be read/],
      [GHOST_SECRET, ascOptions, /could not be read/],
    ];
    for (const [apiKey, options, message] of cases) {
      let caught: unknown;
      try {
        checkSigningKey(apiKey, options);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(JwtMintError);
      expect((caught as JwtMintError).problem).toBe('invalid_key');
      expect((caught as Error).message).toMatch(message);
      if (apiKey.trim().length > 8) expect((caught as Error).message).not.toContain(apiKey.trim().slice(0, 40));
    }
  });

  it('names missing connection configuration and unusable modeOptions', () => {
    expect(() => mintJwt({ modeOptions: appStore.modeOptions, apiKey: p8, connectionConfig: { keyId: ASC_KEY_ID }, now })).toThrow(
      expect.objectContaining({ problem: 'missing_connection_config', keys: ['issuerId'] }),
    );
    expect(() => mintJwt({ modeOptions: { algorithm: 'PS512' }, apiKey: 'x', connectionConfig: {}, now })).toThrow(
      expect.objectContaining({ problem: 'provider_misconfigured' }),
    );
    expect(() => mintJwt({ modeOptions: { algorithm: 'HS256', lifetimeSeconds: -5 }, apiKey: 'x', connectionConfig: {}, now })).toThrow(
      expect.objectContaining({ problem: 'provider_misconfigured' }),
    );
    expect(() => mintJwt({ modeOptions: undefined, apiKey: 'x', connectionConfig: {}, now })).toThrow(JwtMintError);
  });

  it('stores {type, apiKey, token, expires_at} in the stored-credentials shape, with the lifetime read back from the token', () => {
    const creds = mintJwtCredentials({ modeOptions: ghost.modeOptions, apiKey: GHOST_SECRET, connectionConfig: { keyId: GHOST_ID }, now });
    expect(Object.keys(creds).sort()).toEqual(['apiKey', 'expires_at', 'token', 'type']);
    expect(StoredCredentialsSchema.safeParse(creds).success).toBe(true);
    expect(lifetimeSecondsOf(creds)).toBe(300);
  });

  it('as a refresh strategy: mints a new token from the stored key; a stored key that cannot sign fails for good', async () => {
    const provider = { metadata: { name: 'ghost-admin' }, spec: ghost } as ProviderResource;
    const input = (credentials: Record<string, unknown>, at: number) =>
      ({
        namespace: 'ns',
        provider,
        now: at,
        connection: { credentials: { type: 'JWT', ...credentials }, resource: { spec: { connectionConfig: { keyId: GHOST_ID } } } },
      }) as unknown as StrategyInput;
    expect(jwtMintingStrategy.canRefresh({ type: 'JWT', apiKey: GHOST_SECRET })).toBe(true);
    expect(jwtMintingStrategy.canRefresh({ type: 'JWT' })).toBe(false);
    const old = mintJwtCredentials({
      modeOptions: ghost.modeOptions,
      apiKey: GHOST_SECRET,
      connectionConfig: { keyId: GHOST_ID },
      now: now - 600_000,
    });
    const next = await jwtMintingStrategy.refresh(input(old, now));
    expect(next).toMatchObject({ type: 'JWT', apiKey: GHOST_SECRET });
    expect(next.token).not.toBe(old.token);
    expect(Date.parse(next.expires_at as string)).toBe((Math.floor(now / 1000) + 300) * 1000);
    const failed = jwtMintingStrategy.refresh(input({ apiKey: 'zz-not-hex' }, now));
    await expect(failed).rejects.toBeInstanceOf(RefreshError);
    await expect(failed).rejects.toMatchObject({ permanent: true, code: 'reauthorization_required' });
  });
});
