/**
 * Auth mode APP_STORE end to end: import, fetch with the token minted again before expiry, the Connect
 * UI form in chromium, and proxy injection, with the shipped `app-store-connect-api-key` manifest
 * pointed at a loopback server. That server is a hand-written fake of the App Store Connect API (no
 * real one can run here): it accepts a call only with a Bearer ES256 token it verifies with the key's
 * public half, with kid = the key ID, iss = the issuer ID, aud = appstoreconnect-v1, not expired, and
 * refuses any token living longer than 20 minutes (Apple's limit).
 */
import { generateKeyPairSync, verify } from 'node:crypto';
import { applyProvider } from '../../dev/fixtures.js';
import { testKubeConfig } from '../../dev/cluster.js';
import { Connection } from '../../src/http/rest/schemas/connections.js';
import { catalogSpec, startAuthModeBed } from '../support/auth-mode-bed.js';
import { bedForFile } from '../support/file-bed.js';

const KEY_ID = '2X9R4HXF34';
const ISSUER = '57246542-96fe-1a63-e053-0824d011072a';
const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const P8 = ec.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

/** What the fake App Store Connect checks; undefined when the token is good. */
function verdict(authorization: string | undefined): string | undefined {
  const [hd, pl, sg] = (/^Bearer (\S+)$/.exec(authorization ?? '')?.[1] ?? '').split('.');
  if (!hd || !pl || !sg) return 'no bearer token';
  const header = JSON.parse(Buffer.from(hd, 'base64url').toString()) as Record<string, unknown>;
  const claims = JSON.parse(Buffer.from(pl, 'base64url').toString()) as { iss?: string; aud?: string; iat?: number; exp?: number };
  if (header.alg !== 'ES256' || header.kid !== KEY_ID) return 'unknown key';
  if (!verify('sha256', Buffer.from(`${hd}.${pl}`), { key: ec.publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(sg, 'base64url')))
    return 'bad signature';
  if (claims.iss !== ISSUER || claims.aud !== 'appstoreconnect-v1') return 'wrong issuer or audience';
  const now = Date.now() / 1000;
  if (typeof claims.exp !== 'number' || typeof claims.iat !== 'number') return 'no iat/exp';
  if (claims.exp - claims.iat > 1200 || claims.exp - now > 1200) return 'lives longer than 20 minutes';
  if (claims.exp <= now) return 'expired';
  return undefined;
}

const t = bedForFile(
  () => startAuthModeBed('app-store'),
  async () => {
    t.up.on('/v1/', (req, res) => {
      const why = verdict(req.headers.authorization);
      res.writeHead(why ? 401 : 200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(why ? { errors: [{ status: '401', detail: why }] } : { data: [], token: req.headers.authorization!.slice(7) }),
      );
    });
    const spec = catalogSpec('app-store-connect-api-key');
    await t.addIntegration('asc', 'app-store-connect-api-key', { ...spec, proxy: { ...spec.proxy, baseUrl: t.up.origin } });
  },
);

describe('APP_STORE', () => {
  it('an import mints an ES256 token the fake verifies, living at most 20 minutes; the proxy sends it as Bearer', async () => {
    const res = await t.importConnection('asc', 'team', {
      credentials: { type: 'APP_STORE', issuer_id: ISSUER, key_id: KEY_ID, private_key: P8 },
    });
    expect(res.status).toBe(201);
    expect(Connection.safeParse(res.body).success).toBe(true);
    const creds = res.body.credentials;
    expect(creds).toMatchObject({ type: 'APP_STORE', issuer_id: ISSUER, key_id: KEY_ID });
    expect(verdict(`Bearer ${creds.access_token}`)).toBeUndefined();
    expect(Date.parse(creds.expires_at) - Date.now()).toBeLessThanOrEqual(1200_000);

    const proxied = await t.proxyGet('asc', 'team', '/v1/apps');
    expect(proxied.status).toBe(200);
    expect(proxied.body.token).toBe(creds.access_token);
  });

  it('a token about to expire is minted again on fetch and before a proxied call', async () => {
    const before = await t.expireIn('asc', 'team', 5_000);
    const res = await t.rest('GET', '/connections/team?provider_config_key=asc');
    expect(res.status).toBe(200);
    expect(res.body.credentials.access_token).not.toBe(before.access_token);
    expect(verdict(`Bearer ${res.body.credentials.access_token}`)).toBeUndefined();

    const again = await t.expireIn('asc', 'team', 5_000);
    const proxied = await t.proxyGet('asc', 'team', '/v1/apps');
    expect(proxied.status).toBe(200);
    expect(proxied.body.token).not.toBe(again.access_token);
  });

  it('a key that cannot sign ES256 is a 400 on private_key that never echoes it; nothing is stored', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const res = await t.importConnection('asc', 'rsa', {
      credentials: { type: 'APP_STORE', issuer_id: ISSUER, key_id: KEY_ID, private_key: rsa },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_credentials', errors: [{ path: 'body.credentials.private_key' }] });
    expect(JSON.stringify(res.body)).not.toContain(rsa.slice(40, 80));
    expect(t.stored('asc', 'rsa')).toBeUndefined();
    const badId = await t.rest('POST', '/connections', {
      provider_config_key: 'asc',
      credentials: { type: 'APP_STORE', issuer_id: '${connectionConfig.x}', key_id: KEY_ID, private_key: P8 },
    });
    expect(badId.status).toBe(400);
    const flat = await t.rest('POST', '/connection', { provider_config_key: 'asc', api_key: P8 });
    expect(flat.status).toBe(400);
  });

  it("the Provider CRD refuses a token lifetime over Apple's 20 minutes", async () => {
    const spec = catalogSpec('app-store-connect-api-key');
    await expect(
      applyProvider(testKubeConfig(), `asc-too-long-${process.pid}`, { ...spec, appStore: { lifetimeSeconds: 1500 } }),
    ).rejects.toThrow();
  });

  it('the Connect UI form (chromium): a .p8 pasted into the one-line field connects', async () => {
    const connectionId = await t.connectWithForm('asc', { issuer_id: ISSUER, key_id: KEY_ID, private_key: P8.replace(/\n/g, '') });
    const stored = t.stored('asc', connectionId)!;
    expect(stored.type).toBe('APP_STORE');
    expect(verdict(`Bearer ${stored.access_token as string}`)).toBeUndefined();
  });
});
