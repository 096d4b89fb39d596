/**
 * A loopback fake of GitHub's App endpoints. HAND-WRITTEN: no real GitHub server can run locally.
 * What it verifies, as GitHub does:
 * - the app JWT (`Authorization: Bearer <jwt>` on `/app/...`): RS256 signature with the app's public
 *   key, `iss` = the App ID, `exp` in the future and at most 10 minutes after `iat`, `iat` not in the
 *   future (60 s of drift allowed);
 * - the installation belongs to the app whose JWT asks (`GET /app/installations/{id}` and
 *   `POST /app/installations/{id}/access_tokens` answer 404 otherwise);
 * - installation tokens live one hour (`tokenLifetimeSeconds` shortens it for refresh tests);
 * - user authorization (`POST /login/oauth/access_token`): the app's client ID and secret, single-use
 *   codes and single-use rotating refresh tokens; user tokens live 8 hours, refresh tokens 6 months;
 * - `GET /user/installations` lists only the installations the user token's user installed;
 * - API calls (`GET /installation/repositories`, `GET /user`) need a live, unexpired token.
 * The install page (`/apps/{slug}/installations/new`) is a form: the end user's login and "Install",
 * then a redirect to the app's callback with `installation_id`, `setup_action=install`, `state`, and
 * `code` when the app requests user authorization during installation.
 */
import { createPublicKey, generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface FakeApp {
  id: string;
  slug: string;
  clientId: string;
  clientSecret: string;
  privateKeyPem: string;
  /** Where the install page sends the browser back (GitHub's setup URL / user authorization callback URL). */
  callbackUrl: string;
  /** "Request user authorization (OAuth) during installation": the callback carries `code`. */
  requestOAuthOnInstall?: boolean;
}

export interface FakeInstallation {
  id: number;
  appId: string;
  account: string;
  createdAt: string;
}

export interface GitHubAppServer {
  origin: string;
  apps: FakeApp[];
  installations: FakeInstallation[];
  /** Installation tokens minted, in order (token → installation and expiry). */
  installationTokens: Array<{ token: string; installationId: number; expiresAt: number }>;
  userTokens: Array<{ token: string; login: string; expiresAt: number }>;
  /** Rejected app JWTs and why (for assertions). */
  rejections: string[];
  /** API calls (`/installation/...`, `/user...`) as received: path and Authorization header (proxy tests). */
  apiCalls: Array<{ path: string; authorization: string | undefined }>;
  tokenLifetimeSeconds: number;
  userTokenLifetimeSeconds: number;
  addApp(app: Omit<FakeApp, 'id' | 'privateKeyPem' | 'clientId' | 'clientSecret'> & { id?: string }): FakeApp;
  /** An installation made outside any flow (another account's, or another app's). */
  addInstallation(appId: string, account: string, createdAt?: Date): FakeInstallation;
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `host`: where it listens (the e2e suite's pods reach the host on the node's address). */
export async function startGitHubAppServer(host = '127.0.0.1'): Promise<GitHubAppServer> {
  const apps: FakeApp[] = [];
  const publicKeys = new Map<string, KeyObject>();
  const installations: FakeInstallation[] = [];
  const installationTokens: GitHubAppServer['installationTokens'] = [];
  const userTokens: GitHubAppServer['userTokens'] = [];
  const codes = new Map<string, { appId: string; login: string }>();
  const refreshTokens = new Map<string, { appId: string; login: string; expiresAt: number }>();
  const rejections: string[] = [];
  const apiCalls: GitHubAppServer['apiCalls'] = [];
  let nextInstallation = 1000 + Math.floor(Math.random() * 1000);
  let nextApp = 500_000 + Math.floor(Math.random() * 1000);

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => json(res, 500, { message: err.message }));
  });

  /** The app a JWT authenticates, or undefined (the reason is recorded). */
  function appOfJwt(req: IncomingMessage): FakeApp | undefined {
    const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    const reject = (why: string) => {
      rejections.push(why);
      return undefined;
    };
    if (!m) return reject('no bearer token');
    const [h, p, s] = m[1]!.split('.');
    if (!h || !p || !s) return reject('not a JWT');
    let header: { alg?: string };
    let payload: { iss?: unknown; iat?: unknown; exp?: unknown };
    try {
      header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as typeof header;
      payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as typeof payload;
    } catch {
      return reject('JWT not JSON');
    }
    if (header.alg !== 'RS256') return reject(`alg ${header.alg}`);
    const app = apps.find((a) => a.id === String(payload.iss));
    if (!app) return reject(`unknown iss ${String(payload.iss)}`);
    if (!verify('RSA-SHA256', Buffer.from(`${h}.${p}`), publicKeys.get(app.id)!, Buffer.from(s, 'base64url')))
      return reject('bad signature');
    const now = Math.floor(Date.now() / 1000);
    if (typeof payload.iat !== 'number' || typeof payload.exp !== 'number') return reject('iat/exp missing');
    if (payload.iat > now + 60) return reject('iat in the future');
    if (payload.exp <= now) return reject('expired');
    if (payload.exp - payload.iat > 600) return reject('exp more than 10 minutes after iat');
    return app;
  }

  function installationView(i: FakeInstallation) {
    return {
      id: i.id,
      app_id: Number(i.appId),
      app_slug: apps.find((a) => a.id === i.appId)?.slug,
      account: { login: i.account, type: 'Organization' },
      created_at: i.createdAt,
      repository_selection: 'all',
    };
  }

  function issueUserToken(app: FakeApp, login: string) {
    const token = `ghu_${randomBytes(18).toString('base64url')}`;
    const refresh = `ghr_${randomBytes(30).toString('base64url')}`;
    const expiresAt = Date.now() + api.userTokenLifetimeSeconds * 1000;
    userTokens.push({ token, login, expiresAt });
    refreshTokens.set(refresh, { appId: app.id, login, expiresAt: Date.now() + 15_897_600_000 });
    return {
      access_token: token,
      expires_in: api.userTokenLifetimeSeconds,
      refresh_token: refresh,
      refresh_token_expires_in: 15_897_600,
      scope: '',
      token_type: 'bearer',
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname;
    let m: RegExpExecArray | null;

    if ((m = /^\/apps\/([^/]+)\/installations\/new$/.exec(path))) {
      const app = apps.find((a) => a.slug === decodeURIComponent(m![1]!));
      if (!app) return json(res, 404, { message: 'Not Found' });
      if (req.method === 'GET') {
        const state = url.searchParams.get('state') ?? '';
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(
          `<!doctype html><title>Install ${app.slug}</title><h1>Install ${app.slug}</h1>` +
            `<form method="post"><input type="hidden" name="state" value="${state.replace(/"/g, '&quot;')}">` +
            `<label>Account <input name="login"></label><button type="submit">Install</button></form>`,
        );
        return;
      }
      const form = new URLSearchParams(await readBody(req));
      const login = form.get('login') || 'octo-org';
      const installation = api.addInstallation(app.id, login);
      const back = new URL(app.callbackUrl);
      back.searchParams.set('installation_id', String(installation.id));
      back.searchParams.set('setup_action', 'install');
      if (form.get('state')) back.searchParams.set('state', form.get('state')!);
      if (app.requestOAuthOnInstall) {
        const code = randomBytes(10).toString('hex');
        codes.set(code, { appId: app.id, login });
        back.searchParams.set('code', code);
      }
      res.writeHead(302, { location: back.href });
      res.end();
      return;
    }

    if ((m = /^\/app\/installations\/(\d+)(\/access_tokens)?$/.exec(path))) {
      const app = appOfJwt(req);
      if (!app) return json(res, 401, { message: 'A JSON web token could not be decoded' });
      const installation = installations.find((i) => i.id === Number(m![1]) && i.appId === app.id);
      if (!installation) return json(res, 404, { message: 'Not Found' });
      if (!m[2] && req.method === 'GET') return json(res, 200, installationView(installation));
      if (m[2] && req.method === 'POST') {
        const token = `ghs_${randomBytes(18).toString('base64url')}`;
        const expiresAt = Date.now() + api.tokenLifetimeSeconds * 1000;
        installationTokens.push({ token, installationId: installation.id, expiresAt });
        return json(res, 201, {
          token,
          expires_at: new Date(expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z'),
          permissions: { contents: 'read', metadata: 'read' },
          repository_selection: 'all',
        });
      }
      return json(res, 405, { message: 'Method Not Allowed' });
    }

    if (path === '/login/oauth/access_token' && req.method === 'POST') {
      const form = new URLSearchParams(await readBody(req));
      const app = apps.find((a) => a.clientId === form.get('client_id') && a.clientSecret === form.get('client_secret'));
      if (!app) return json(res, 200, { error: 'incorrect_client_credentials' });
      if (form.get('grant_type') === 'refresh_token') {
        const grant = refreshTokens.get(form.get('refresh_token') ?? '');
        if (!grant || grant.appId !== app.id || grant.expiresAt < Date.now()) return json(res, 200, { error: 'bad_refresh_token' });
        refreshTokens.delete(form.get('refresh_token')!);
        return json(res, 200, issueUserToken(app, grant.login));
      }
      const grant = codes.get(form.get('code') ?? '');
      if (!grant || grant.appId !== app.id) return json(res, 200, { error: 'bad_verification_code' });
      codes.delete(form.get('code')!);
      return json(res, 200, issueUserToken(app, grant.login));
    }

    if (path.startsWith('/installation/') || path.startsWith('/user')) apiCalls.push({ path, authorization: req.headers.authorization });
    const bearer = /^(?:Bearer|token) (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (path === '/user/installations') {
      const user = userTokens.find((t) => t.token === bearer && t.expiresAt > Date.now());
      if (!user) return json(res, 401, { message: 'Bad credentials' });
      const mine = installations.filter((i) => i.account === user.login);
      return json(res, 200, { total_count: mine.length, installations: mine.map(installationView) });
    }
    if (path === '/user') {
      const user = userTokens.find((t) => t.token === bearer && t.expiresAt > Date.now());
      if (!user) return json(res, 401, { message: 'Bad credentials' });
      return json(res, 200, { login: user.login });
    }
    if (path === '/installation/repositories') {
      const t = installationTokens.find((x) => x.token === bearer && x.expiresAt > Date.now());
      if (!t) return json(res, 401, { message: 'Bad credentials' });
      return json(res, 200, { total_count: 1, installation_id: t.installationId, repositories: [{ full_name: 'octo-org/hello' }] });
    }
    json(res, 404, { message: 'Not Found' });
  }

  await new Promise<void>((r) => server.listen(0, host, r));
  const { port } = server.address() as { port: number };
  const api: GitHubAppServer = {
    origin: `http://${host}:${port}`,
    apps,
    installations,
    installationTokens,
    userTokens,
    rejections,
    apiCalls,
    tokenLifetimeSeconds: 3600,
    userTokenLifetimeSeconds: 8 * 3600,
    addApp(spec) {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const app: FakeApp = {
        ...spec,
        id: spec.id ?? String(nextApp++),
        clientId: `Iv1.${randomBytes(8).toString('hex')}`,
        clientSecret: randomBytes(20).toString('hex'),
        privateKeyPem: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
      };
      apps.push(app);
      publicKeys.set(app.id, createPublicKey(publicKey.export({ type: 'spki', format: 'pem' })));
      return app;
    },
    addInstallation(appId, account, createdAt = new Date()) {
      const i: FakeInstallation = { id: nextInstallation++, appId, account, createdAt: createdAt.toISOString() };
      installations.push(i);
      return i;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  return api;
}
