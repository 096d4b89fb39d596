/**
 * APP installation tokens. The provider here is a small hand-written HTTP server on 127.0.0.1
 * standing in for GitHub's `POST /app/installations/{id}/access_tokens`: it verifies the app JWT's
 * RS256 signature with the app's public key and its claims, as GitHub does, and answers like GitHub.
 */
import { generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { appJwt, requestInstallationToken } from '../../src/modes/shared/app-installation.js';
import { RefreshError } from '../../src/auth/refresh/token-refresher.js';

const APP_ID = '123456';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

let server: Server;
let base: string;
const seen: Array<{ path: string; claims?: Record<string, unknown> }> = [];
let failWith: { status: number; headers?: Record<string, string> } | undefined;

function verifyJwt(jwt: string, key: KeyObject): Record<string, unknown> | undefined {
  const [h, p, s] = jwt.split('.');
  if (!h || !p || !s) return undefined;
  const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as { alg?: string };
  if (header.alg !== 'RS256') return undefined;
  if (!verify('RSA-SHA256', Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url'))) return undefined;
  return JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const match = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(req.url ?? '');
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST' || !match) return send(404, { message: 'Not Found' });
    if (failWith) {
      const f = failWith;
      failWith = undefined;
      return send(f.status, { message: 'injected' }, f.headers);
    }
    const jwt = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    const claims = verifyJwt(jwt, publicKey);
    seen.push({ path: req.url!, claims });
    const now = Math.floor(Date.now() / 1000);
    if (
      !claims ||
      claims.iss !== APP_ID ||
      typeof claims.exp !== 'number' ||
      claims.exp <= now ||
      (claims.exp as number) - (claims.iat as number) > 600
    ) {
      return send(401, { message: 'A JSON web token could not be decoded' });
    }
    if (match[1] !== '42') return send(404, { message: 'Not Found' });
    send(201, {
      token: `ghs_installation_${seen.length}`,
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      permissions: { contents: 'read' },
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** An installation token for `installation`, asked with the App's key (or `privateKeyPem`). */
const installationToken = (installation: number, privateKeyPem = pem) =>
  requestInstallationToken({
    appId: APP_ID,
    privateKeyPem,
    tokenUrl: `${base}/app/installations/${installation}/access_tokens`,
    fetch,
    now: Date.now(),
  });

it('signs an RS256 app JWT the provider can verify with the public key', () => {
  const now = Date.now();
  const claims = verifyJwt(appJwt(APP_ID, pem, now), publicKey)!;
  expect(claims.iss).toBe(APP_ID);
  expect(claims.iat).toBe(Math.floor(now / 1000) - 60);
  expect(claims.exp).toBe(Math.floor(now / 1000) + 540);
});

it('exchanges the JWT for an installation token', async () => {
  const minted = await installationToken(42);
  expect(minted.token).toMatch(/^ghs_installation_/);
  expect(Date.parse(minted.expiresAt!)).toBeGreaterThan(Date.now());
  expect(minted.raw).toMatchObject({ permissions: { contents: 'read' } });
  expect(minted.raw).not.toHaveProperty('token');
  expect(seen.at(-1)?.claims?.iss).toBe(APP_ID);
});

it('fails for good on a wrong key or a removed installation, and transiently on 503 with Retry-After', async () => {
  const wrongKey = installationToken(42, other);
  await expect(wrongKey).rejects.toMatchObject({ permanent: true, code: 'reauthorization_required', providerError: { status: 401 } });
  const removed = installationToken(7);
  await expect(removed).rejects.toMatchObject({ permanent: true, providerError: { status: 404 } });
  failWith = { status: 503, headers: { 'retry-after': '7' } };
  const unavailable = installationToken(42);
  await expect(unavailable).rejects.toBeInstanceOf(RefreshError);
  failWith = { status: 503, headers: { 'retry-after': '7' } };
  await expect(installationToken(42)).rejects.toMatchObject({ permanent: false, retryAfterMs: 7000 });
  await expect(installationToken(42, 'not a key')).rejects.toMatchObject({ permanent: true, code: 'integration_misconfigured' });
});
