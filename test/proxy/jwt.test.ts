/**
 * Auth mode JWT end to end, through the REST API, the Connect UI's form API and the proxy, on the
 * test control plane. The providers are the shipped catalog entries `ghost-admin` and
 * `app-store-connect` (modeOptions, headers, labels as shipped) with only `proxy.baseUrl` pointed at
 * a loopback server. That server is a hand-written fake standing in for Ghost's Admin API and the
 * App Store Connect API: like them, it accepts a request only with a JWT it can verify — HS256 with
 * Ghost's shared secret (kid, aud /admin/, at most 5 minutes, not expired), ES256 with the App Store
 * Connect key's public half (kid, iss, aud appstoreconnect-v1, at most 20 minutes ahead, not expired).
 */
import { createHmac, generateKeyPairSync, timingSafeEqual, verify } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mintJwtCredentials } from '../../src/modes/shared/jwt-minting.js';
import { Connection } from '../../src/http/rest/schemas/connections.js';
import { sealSession } from '../support/fixtures.js';
import { eventually } from '../../dev/cluster.js';
import type { JsonCall } from '../support/api-clients.js';
import { catalogSpec } from '../support/catalog-files.js';
import { ASC_ISSUER, ASC_KEY_ID, ASC_P8 as P8, ascKeyPair as ec, GHOST_ID, GHOST_SECRET } from '../support/jwt-keys.js';
import { bedForFile } from '../support/file-bed.js';
import { startProxyModeBed } from '../support/proxy-mode-bed.js';
import { startUpstream } from '../support/servers/upstream.js';

/** Every token the fake APIs saw, with their verdict. */
const seen: Array<{ api: 'ghost' | 'asc'; token: string; ok: boolean; why?: string }> = [];

function parts(token: string) {
  const [hd, pl, sg] = token.split('.');
  if (!hd || !pl || !sg) return undefined;
  try {
    return {
      header: JSON.parse(Buffer.from(hd, 'base64url').toString()) as Record<string, unknown>,
      claims: JSON.parse(Buffer.from(pl, 'base64url').toString()) as Record<string, unknown>,
      input: Buffer.from(`${hd}.${pl}`),
      signature: Buffer.from(sg, 'base64url'),
    };
  } catch {
    return undefined;
  }
}

/** What the fake Ghost checks (Ghost's admin api-key authentication, in short). */
function ghostVerdict(authorization: string | undefined): string | undefined {
  const token = /^Ghost (\S+)$/.exec(authorization ?? '')?.[1];
  const p = token ? parts(token) : undefined;
  if (!p) return 'no Ghost token';
  if (p.header.alg !== 'HS256' || p.header.kid !== GHOST_ID) return 'unknown key';
  const expected = createHmac('sha256', Buffer.from(GHOST_SECRET, 'hex')).update(p.input).digest();
  if (p.signature.length !== expected.length || !timingSafeEqual(p.signature, expected)) return 'bad signature';
  const { iat, exp, aud } = p.claims as { iat?: number; exp?: number; aud?: string };
  const now = Date.now() / 1000;
  if (aud !== '/admin/') return 'wrong audience';
  if (typeof iat !== 'number' || typeof exp !== 'number' || exp - iat > 300) return 'lifetime over 5 minutes';
  if (exp <= now) return 'expired';
  return undefined;
}

/** What the fake App Store Connect checks. */
function ascVerdict(authorization: string | undefined): string | undefined {
  const token = /^Bearer (\S+)$/.exec(authorization ?? '')?.[1];
  const p = token ? parts(token) : undefined;
  if (!p) return 'no bearer token';
  if (p.header.alg !== 'ES256' || p.header.kid !== ASC_KEY_ID || p.header.typ !== 'JWT') return 'unknown key';
  if (!verify('sha256', p.input, { key: ec.publicKey, dsaEncoding: 'ieee-p1363' }, p.signature)) return 'bad signature';
  const { iss, exp, aud } = p.claims as { iss?: string; exp?: number; aud?: string };
  const now = Date.now() / 1000;
  if (iss !== ASC_ISSUER || aud !== 'appstoreconnect-v1') return 'wrong issuer or audience';
  if (typeof exp !== 'number' || exp - now > 1200) return 'expires more than 20 minutes ahead';
  if (exp <= now) return 'expired';
  return undefined;
}

function fakeApi(api: 'ghost' | 'asc', verdict: (authorization: string | undefined) => string | undefined) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const why = verdict(req.headers.authorization);
    seen.push({ api, token: String(req.headers.authorization).split(' ')[1] ?? '', ok: !why, why });
    if (why) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ errors: [{ message: why, type: 'UnauthorizedError' }] }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ api, path: req.url, acceptVersion: req.headers['accept-version'] ?? null }));
  };
}

const rest: JsonCall = (method, path, body) => h.rest(method, path, body);
const proxyGet = (integration: string, connectionId: string, path: string) => h.proxyTo(integration)(connectionId, path);

const storedCredentials = (integration: string, connectionId: string) =>
  h.store.connections.getConnection(h.namespace, integration, connectionId)?.credentials;

const h = bedForFile(async () => {
  const up = await startUpstream();
  up.on('/ghost/api/admin/', fakeApi('ghost', ghostVerdict));
  up.on('/v1/', fakeApi('asc', ascVerdict));
  const h = await startProxyModeBed('jwt', { up });
  const ghost = catalogSpec('ghost-admin');
  const asc = catalogSpec('app-store-connect');
  const ghostProvider = await h.addProvider('ghost-admin', {
    ...ghost,
    proxy: { ...ghost.proxy, baseUrl: `${up.origin}/ghost/api/admin` },
  });
  const ascProvider = await h.addProvider('app-store-connect', { ...asc, proxy: { ...asc.proxy, baseUrl: up.origin } });
  await h.addIntegration('ghost', ghostProvider);
  await h.addIntegration('asc', ascProvider);
  return { ...h, ghostProvider, ascProvider };
});

describe('JWT connections through the REST API and the proxy', () => {
  it('Ghost: an import mints a token at once; the proxy sends it as "Ghost <jwt>" with accept-version, and the fake Ghost accepts it', async () => {
    const imported = await h.importConnection('ghost', 'blog', {
      credentials: { type: 'JWT', apiKey: GHOST_SECRET },
      connection_config: { adminDomain: 'example.ghost.io', keyId: GHOST_ID },
    });
    expect(imported.status).toBe(201);
    expect(Connection.safeParse(imported.body).success).toBe(true);
    const creds = imported.body.credentials;
    expect(creds).toMatchObject({ type: 'JWT', apiKey: GHOST_SECRET });
    expect(ghostVerdict(`Ghost ${creds.token}`)).toBeUndefined();
    expect(Date.parse(creds.expires_at) - Date.now()).toBeLessThanOrEqual(300_000);

    seen.length = 0;
    const res = await proxyGet('ghost', 'blog', '/posts/?limit=1');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ api: 'ghost', path: '/ghost/api/admin/posts/?limit=1', acceptVersion: 'v5.0' });
    expect(seen).toEqual([{ api: 'ghost', token: creds.token, ok: true, why: undefined }]);

    // A fresh token is used as it is: fetching again neither mints nor writes.
    const again = await rest('GET', '/connections/blog?provider_config_key=ghost');
    expect(again.status).toBe(200);
    expect(again.body.credentials.token).toBe(creds.token);
  });

  it('App Store Connect: the .p8 key signs ES256 tokens the fake App Store Connect verifies with the public key (Bearer by default)', async () => {
    const imported = await h.importConnection('asc', 'team', {
      credentials: { type: 'JWT', apiKey: P8 },
      connection_config: { issuerId: ASC_ISSUER, keyId: ASC_KEY_ID },
    });
    expect(imported.status).toBe(201);
    seen.length = 0;
    const res = await proxyGet('asc', 'team', '/v1/apps?limit=2');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ api: 'asc', path: '/v1/apps?limit=2' });
    expect(seen).toEqual([{ api: 'asc', token: imported.body.credentials.token, ok: true, why: undefined }]);
  });

  it('an expired token is minted again before the proxy uses it, and when the connection is fetched', async () => {
    const expire = async (integration: string, connectionId: string, config: Record<string, string>, apiKey: string) => {
      const name = h.store.connections.getConnection(h.namespace, integration, connectionId)!.resource.metadata.name;
      const spec = catalogSpec(integration === 'ghost' ? 'ghost-admin' : 'app-store-connect');
      // A token the same key minted 30 minutes ago: correctly signed, but expired.
      const old = mintJwtCredentials({ modeOptions: spec.modeOptions, apiKey, connectionConfig: config, now: Date.now() - 30 * 60_000 });
      await h.store.connections.updateCredentials(h.namespace, name, () => old);
      return old.token!;
    };

    const oldGhost = await expire('ghost', 'blog', { keyId: GHOST_ID }, GHOST_SECRET);
    expect(ghostVerdict(`Ghost ${oldGhost}`)).toBe('expired'); // the fake would refuse it
    seen.length = 0;
    const res = await proxyGet('ghost', 'blog', '/site/');
    expect(res.status).toBe(200);
    expect(seen).toHaveLength(1); // no 401 and retry: the first request already had a fresh token
    expect(seen[0]).toMatchObject({ ok: true });
    expect(seen[0]!.token).not.toBe(oldGhost);
    expect(storedCredentials('ghost', 'blog')?.token).toBe(seen[0]!.token);

    const oldAsc = await expire('asc', 'team', { keyId: ASC_KEY_ID, issuerId: ASC_ISSUER }, P8);
    const fetched = await rest('GET', '/connections/team?provider_config_key=asc');
    expect(fetched.status).toBe(200);
    const fresh = fetched.body.credentials;
    expect(fresh.token).not.toBe(oldAsc);
    expect(ascVerdict(`Bearer ${fresh.token}`)).toBeUndefined();
    expect(Date.parse(fresh.expires_at)).toBeGreaterThan(Date.now());
    expect(storedCredentials('asc', 'team')?.token).toBe(fresh.token);
    const status = h.store.connections.getConnection(h.namespace, 'asc', 'team')!.resource.status;
    expect(status?.expiresAt).toBe(fresh.expires_at);
  });

  it('a key that cannot sign is a 400 at import, names the field, never echoes the key, and stores nothing', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const cases = [
      {
        integration: 'ghost',
        apiKey: `${GHOST_ID}:${GHOST_SECRET}`,
        config: { adminDomain: 'example.ghost.io', keyId: GHOST_ID },
        code: 'invalid_credentials',
        message: /colon/,
      },
      {
        integration: 'ghost',
        apiKey: 'this is not hex',
        config: { adminDomain: 'example.ghost.io', keyId: GHOST_ID },
        code: 'invalid_credentials',
        message: /hex/,
      },
      {
        integration: 'asc',
        apiKey: rsa,
        config: { issuerId: ASC_ISSUER, keyId: ASC_KEY_ID },
        code: 'invalid_credentials',
        message: /EC P-256/,
      },
      {
        integration: 'asc',
        apiKey: 'MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg',
        config: { issuerId: ASC_ISSUER, keyId: ASC_KEY_ID },
        code: 'invalid_credentials',
        message: /private key/,
      },
      { integration: 'asc', apiKey: P8, config: { keyId: ASC_KEY_ID }, code: 'missing_connection_config', message: /issuerId/ },
    ];
    for (const [i, c] of cases.entries()) {
      const res = await h.importConnection(c.integration, `bad-${i}`, {
        credentials: { type: 'JWT', apiKey: c.apiKey },
        connection_config: c.config,
      });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe(c.code);
      expect(res.body.error.message).toMatch(c.message);
      expect(res.body.error.errors[0].path).toBe(
        c.code === 'invalid_credentials' ? 'body.credentials.apiKey' : 'body.connection_config.issuerId',
      );
      expect(JSON.stringify(res.body)).not.toContain(c.apiKey.slice(0, 30));
      expect(h.store.connections.getConnection(h.namespace, c.integration, `bad-${i}`)).toBeUndefined();
      expect((await rest('GET', `/connections/bad-${i}?provider_config_key=${c.integration}`)).status).toBe(404);
    }
    // Unknown fields and the wrong credential type are refused by the schema as for every mode.
    const extra = await h.rest('POST', '/connections', {
      provider_config_key: 'ghost',
      credentials: { type: 'JWT', apiKey: GHOST_SECRET, token: 'x' },
    });
    expect(extra.status).toBe(400);
    const wrongType = await h.rest('POST', '/connections', {
      provider_config_key: 'ghost',
      credentials: { type: 'API_KEY', apiKey: GHOST_SECRET },
    });
    expect(wrongType.body.error.code).toBe('credentials_type_mismatch');
  });

  it('a re-import of an existing connection replaces the key and mints with the configuration it kept', async () => {
    const res = await h.importConnection('ghost', 'blog', {
      credentials: { type: 'JWT', apiKey: GHOST_SECRET.toUpperCase() },
    });
    expect(res.status).toBe(200);
    expect(res.body.connection_config).toMatchObject({ keyId: GHOST_ID });
    expect(ghostVerdict(`Ghost ${res.body.credentials.token}`)).toBeUndefined();
  });

  it('a stored key that can no longer sign: the fetch answers 424 reauthorization_required and the connection carries an auth error', async () => {
    await h.importConnection('ghost', 'broken', {
      credentials: { type: 'JWT', apiKey: GHOST_SECRET },
      connection_config: { adminDomain: 'example.ghost.io', keyId: GHOST_ID },
    });
    const name = h.store.connections.getConnection(h.namespace, 'ghost', 'broken')!.resource.metadata.name;
    await h.store.connections.updateCredentials(h.namespace, name, () => ({
      type: 'JWT',
      apiKey: 'zz',
      token: 'old',
      expires_at: new Date(Date.now() - 1000).toISOString(),
    }));
    const res = await rest('GET', '/connections/broken?provider_config_key=ghost');
    expect(res.status).toBe(424);
    expect(res.body.error.code).toBe('reauthorization_required');
    expect(JSON.stringify(res.body)).not.toContain('"zz"');
    const errors = await eventually(() =>
      h.store.connections.getConnection(h.namespace, 'ghost', 'broken')?.resource.status?.errors?.filter((e) => e.type === 'auth'),
    );
    expect(errors[0]?.message).toMatch(/cannot mint a token/);
    expect(res.body.error.message).toContain(errors[0]!.logId);
  });
});

describe('JWT in the Connect UI form API', () => {
  const session = (integrations: string[]) =>
    sealSession(h.env.secretKey, { namespace: h.namespace, endUser: { id: 'jwt-user' }, allowedIntegrations: integrations });
  const connect = async (token: string, method: 'GET' | 'POST', path: string, body?: unknown) => {
    const res = await fetch(`${h.server.url}/connect/api/${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('offers a form with the signing key and the configuration keys, labelled from fieldLabels', async () => {
    const res = await connect(session(['asc', 'ghost']), 'GET', 'session');
    expect(res.status).toBe(200);
    const asc = res.body.data.integrations.find((i: { id: string }) => i.id === 'asc');
    expect(asc).toMatchObject({
      authMode: 'JWT',
      flow: 'form',
      fields: [{ name: 'apiKey', label: 'Private key (contents of the .p8 file)', secret: true, required: true }],
      configFields: [
        { name: 'issuerId', label: 'Issuer ID' },
        { name: 'keyId', label: 'Key ID' },
      ],
    });
    const ghost = res.body.data.integrations.find((i: { id: string }) => i.id === 'ghost');
    expect(ghost.fields[0].label).toBe('Admin API key secret (the part after the colon)');
    expect(ghost.configFields.map((f: { name: string }) => f.name)).toEqual(['adminDomain', 'keyId']);
  });

  it('a key that cannot sign is a form error on the key field and stores nothing; a .p8 pasted into the one-line field connects', async () => {
    const token = session(['asc']);
    const before = h.store.connectionScans.listConnections(h.namespace).length;
    const bad = await connect(token, 'POST', 'forms', {
      integration: 'asc',
      values: { apiKey: 'not a key' },
      connectionConfig: { issuerId: ASC_ISSUER, keyId: ASC_KEY_ID },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_credentials', errors: [{ path: 'values.apiKey' }] });
    expect(bad.body.error.message).toContain('Private key (contents of the .p8 file)');
    expect(h.store.connectionScans.listConnections(h.namespace)).toHaveLength(before);

    // An <input> drops the line breaks of a pasted PEM file.
    const good = await connect(token, 'POST', 'forms', {
      integration: 'asc',
      values: { apiKey: P8.replace(/\n/g, '') },
      connectionConfig: { issuerId: ASC_ISSUER, keyId: ASC_KEY_ID },
    });
    expect(good.status).toBe(201);
    const created = h.store.connectionScans
      .listConnections(h.namespace)
      .find((c) => c.spec.integration === 'asc' && c.spec.endUser?.id === 'jwt-user')!;
    expect(created.spec.connectionConfig).toEqual({ issuerId: ASC_ISSUER, keyId: ASC_KEY_ID });
    const stored = storedCredentials('asc', created.spec.connectionId)!;
    expect(stored.type).toBe('JWT');
    seen.length = 0;
    const res = await proxyGet('asc', created.spec.connectionId, '/v1/apps');
    expect(res.status).toBe(200);
    expect(seen).toEqual([{ api: 'asc', token: stored.token, ok: true, why: undefined }]);
  });
});
