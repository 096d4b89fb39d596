/**
 * APP (GitHub App installation) and CUSTOM (GitHub App with user authorization during installation)
 * through the Connect UI in Chromium, against a loopback fake GitHub (test/support/servers/github-app-server.ts
 * says what it verifies: the app JWT's RS256 signature, iss, exp ≤ 10 min, installation ownership, one-hour
 * tokens). Covers: the install page → callback → stored credentials, fetch and forced re-mint
 * (`refresh_codehost_app_jwt_token` and its alias), refresh of short-lived tokens on fetch, the
 * user token's refresh, and hostile callbacks (forged installation ID, missing or replayed state,
 * another browser) that store nothing.
 */
import type { Page, Response } from 'playwright-core';
import { eventually } from '../../dev/cluster.js';
import { waitForEvent } from '../support/browser.js';
import type { ConnectBed } from '../support/connect-bed.js';
import { startGitHubAppBed, type GitHubAppBed } from '../support/github-app-bed.js';
import type { FakeApp, GitHubAppServer } from '../support/servers/github-app-server.js';

let t: GitHubAppBed;
let gh: GitHubAppServer;
let installApp: FakeApp;
let userApp: FakeApp;
let otherApp: FakeApp;
let { ns, latchkey, browser } = {} as ConnectBed;
let { api, toInstallPage, install } = {} as GitHubAppBed;

beforeAll(async () => {
  t = await startGitHubAppBed('auth-app');
  ({ gh, installApp, userApp, otherApp, api, toInstallPage, install } = t);
  ({ ns, latchkey, browser } = t.bed);
}, 120_000);

afterAll(async () => {
  await t?.close();
});

describe('APP: GitHub App installation', () => {
  it('installs through the Connect UI, stores a working installation token, and re-mints it when asked', async () => {
    const context = await browser.newContext();
    const { page, popup } = await toInstallPage(context, 'github', 'user-app');
    expect(new URL(popup.url()).pathname).toBe(`/apps/${installApp.slug}/installations/new`);
    expect(new URL(popup.url()).searchParams.get('state')).toMatch(/^lkf1\./);
    await install(popup, 'octo-org');
    const connectionId = (await waitForEvent(page, 'connect', 30_000)).connectionId!;
    await context.close();

    const conn = await eventually(() => latchkey.ctx.connections.getConnection(ns.name, 'github', connectionId));
    const installation = gh.installations.find((i) => i.account === 'octo-org' && i.appId === installApp.id)!;
    expect(conn.resource.spec.connectionConfig).toMatchObject({ appSlug: installApp.slug, installationId: String(installation.id) });
    expect(conn.credentials.type).toBe('APP');
    const first = gh.installationTokens.at(-1)!;
    expect(conn.credentials.access_token).toBe(first.token);
    expect(gh.rejections).toEqual([]);

    const got = await api(`/connections/${connectionId}?provider_config_key=github`);
    expect(got.status).toBe(200);
    const creds = got.body.credentials as Record<string, string>;
    expect(creds.access_token).toBe(first.token);
    expect(Date.parse(creds.expires_at!)).toBeGreaterThan(Date.now() + 50 * 60_000);
    const repos = await fetch(`${gh.origin}/installation/repositories`, { headers: { authorization: `Bearer ${creds.access_token}` } });
    expect(repos.status).toBe(200);

    for (const flag of ['refresh_codehost_app_jwt_token', 'refresh_github_app_jwt_token']) {
      const before = gh.installationTokens.length;
      const forced = await api(`/connections/${connectionId}?provider_config_key=github&${flag}=true`);
      expect(forced.status).toBe(200);
      expect(gh.installationTokens.length).toBe(before + 1);
      expect((forced.body.credentials as Record<string, string>).access_token).toBe(gh.installationTokens.at(-1)!.token);
    }
    expect(gh.rejections).toEqual([]);
  });

  it('renews an installation token that is about to end on fetch', async () => {
    gh.tokenLifetimeSeconds = 120; // inside the refresh margin: every fetch needs a new one
    try {
      const connectionId = await t.installConnection('github', 'user-short', 'short-lived-org');
      const stored = latchkey.ctx.connections.getConnection(ns.name, 'github', connectionId)!;
      const got = await api(`/connections/${connectionId}?provider_config_key=github`);
      expect(got.status).toBe(200);
      expect((got.body.credentials as Record<string, string>).access_token).not.toBe(stored.credentials.access_token);
      expect((got.body.credentials as Record<string, string>).access_token).toBe(gh.installationTokens.at(-1)!.token);
    } finally {
      gh.tokenLifetimeSeconds = 3600;
    }
  });

  it('refuses forged installation IDs, a missing state, a replay and another browser, and stores nothing', async () => {
    const before = latchkey.ctx.connectionScans.listConnections(ns.name).length;
    const foreign = gh.addInstallation(otherApp.id, 'victim-org');
    const older = gh.addInstallation(installApp.id, 'old-org', new Date(Date.now() - 3600_000));
    const context = await browser.newContext();
    const { popup } = await toInstallPage(context, 'github', 'attacker');
    const state = new URL(popup.url()).searchParams.get('state')!;
    const callback = (q: Record<string, string>) => `${latchkey.url}/oauth/callback?${new URLSearchParams(q).toString()}`;

    // Another browser (no binding cookie): refused before anything is consumed.
    const elsewhere = await fetch(callback({ installation_id: String(foreign.id), setup_action: 'install', state }));
    expect(elsewhere.status).toBe(403);
    // Another app's installation.
    const forged = await popup.goto(callback({ installation_id: String(foreign.id), setup_action: 'install', state }));
    expect(forged?.status()).toBe(400);
    expect(await popup.textContent('main')).toContain('does not know this installation');
    // The state is spent now: the same state with a real installation is a replay.
    const replay = await popup.goto(callback({ installation_id: String(older.id), setup_action: 'install', state }));
    expect(replay?.status()).toBe(400);
    expect(await popup.textContent('main')).toContain('already completed');

    // A fresh flow, claiming an installation made before it started (someone else's, same app).
    const second = await toInstallPage(context, 'github', 'attacker');
    const state2 = new URL(second.popup.url()).searchParams.get('state')!;
    const old = await second.popup.goto(callback({ installation_id: String(older.id), setup_action: 'install', state: state2 }));
    expect(old?.status()).toBe(400);
    expect(await second.popup.textContent('main')).toContain('not made in this connect flow');
    const third = await toInstallPage(context, 'github', 'attacker');
    const state3 = new URL(third.popup.url()).searchParams.get('state')!;
    const update = await third.popup.goto(callback({ installation_id: String(older.id), setup_action: 'update', state: state3 }));
    expect(update?.status()).toBe(400);
    const garbage = await third.popup.goto(callback({ installation_id: '../../x', setup_action: 'install', state: state3 }));
    expect(garbage?.status()).toBe(400);
    // No state at all.
    const noState = await fetch(callback({ installation_id: String(older.id), setup_action: 'install' }));
    expect(noState.status).toBe(400);
    await context.close();
    expect(latchkey.ctx.connectionScans.listConnections(ns.name)).toHaveLength(before);
  });
});

describe('APP import through POST /connections', () => {
  it("imports an installation of the Integration's app with a fresh token, and refuses another app's or none", async () => {
    const existing = gh.addInstallation(installApp.id, 'imported-org', new Date(Date.now() - 86_400_000));
    const created = await t.importInstallation('imported', existing.id);
    expect(created.status).toBe(201);
    const creds = created.body.credentials as Record<string, string>;
    expect(creds.type).toBe('APP');
    expect(creds.access_token).toBe(gh.installationTokens.at(-1)!.token);
    expect(gh.installationTokens.at(-1)!.installationId).toBe(existing.id);
    expect(created.body.connection_config).toMatchObject({ installationId: String(existing.id), appSlug: installApp.slug });

    const before = latchkey.ctx.connectionScans.listConnections(ns.name).length;
    const foreign = gh.addInstallation(otherApp.id, 'victim-org-2');
    const refused = await t.importInstallation('stolen', foreign.id);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: { code: 'installation_not_found' } });
    const missing = await api('/connections', {
      method: 'POST',
      body: JSON.stringify({ provider_config_key: 'github', connection_id: 'none', credentials: { type: 'APP' } }),
    });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ error: { code: 'missing_credentials' } });
    const bad = await api('/connections', {
      method: 'POST',
      body: JSON.stringify({
        provider_config_key: 'github',
        connection_id: 'bad',
        credentials: { type: 'APP', installation_id: '1/../2' },
      }),
    });
    expect(bad.status).toBe(400);
    expect(latchkey.ctx.connectionScans.listConnections(ns.name)).toHaveLength(before);
  });
});

describe('CUSTOM: GitHub App with user authorization', () => {
  it('installs, exchanges the code, stores both tokens, hides the refresh token and renews the user token', async () => {
    const connectionId = await t.installConnection('github-user', 'user-custom', 'mona');
    const conn = latchkey.ctx.connections.getConnection(ns.name, 'github-user', connectionId)!;
    expect(conn.credentials.type).toBe('CUSTOM');
    const user = conn.credentials.user as Record<string, string>;
    expect(user.access_token).toMatch(/^ghu_/);
    expect(user.refresh_token).toMatch(/^ghr_/);
    expect(Date.parse(conn.credentials.expires_at as string)).toBeLessThanOrEqual(
      Date.parse(conn.credentials.installation_expires_at as string),
    );

    const got = await api(`/connections/${connectionId}?provider_config_key=github-user`);
    expect(got.status).toBe(200);
    const shown = got.body.credentials as { access_token: string; user: Record<string, unknown> };
    expect(shown.access_token).toBe(conn.credentials.access_token);
    expect(shown.user.access_token).toBe(user.access_token);
    expect(shown.user.refresh_token).toBeUndefined();
    const withRefresh = await api(`/connections/${connectionId}?provider_config_key=github-user&refresh_token=true`);
    expect((withRefresh.body.credentials as { user: Record<string, unknown> }).user.refresh_token).toBe(user.refresh_token);

    // GitHub's 8-hour user token outlives this installation token: a forced renewal keeps it.
    const kept = await api(`/connections/${connectionId}?provider_config_key=github-user&refresh_codehost_app_jwt_token=true`);
    expect(kept.status).toBe(200);
    const k = kept.body.credentials as { access_token: string; user: { access_token: string } };
    expect(k.access_token).toBe(gh.installationTokens.at(-1)!.token);
    expect(k.user.access_token).toBe(user.access_token);
    const me = await fetch(`${gh.origin}/user`, { headers: { authorization: `Bearer ${user.access_token}` } });
    expect(await me.json()).toEqual({ login: 'mona' });
  });

  it('renews a user token that would lapse before the next installation token, with its refresh token', async () => {
    gh.userTokenLifetimeSeconds = 1800;
    try {
      const connectionId = await t.installConnection('github-user', 'user-custom-short', 'mona-short');
      const conn = await eventually(() => latchkey.ctx.connections.getConnection(ns.name, 'github-user', connectionId));
      const user = conn.credentials.user as Record<string, string>;
      // The connection is due when the user token ends (30 min), before the installation token (1 h).
      expect(conn.credentials.expires_at).toBe(user.expires_at);
      const renewed = await api(
        `/connections/${connectionId}?provider_config_key=github-user&refresh_github_app_jwt_token=true&refresh_token=true`,
      );
      expect(renewed.status).toBe(200);
      const c = renewed.body.credentials as { user: { access_token: string; refresh_token: string } };
      expect(c.user.access_token).not.toBe(user.access_token);
      expect(c.user.refresh_token).not.toBe(user.refresh_token);
      const me = await fetch(`${gh.origin}/user`, { headers: { authorization: `Bearer ${c.user.access_token}` } });
      expect(await me.json()).toEqual({ login: 'mona-short' });
    } finally {
      gh.userTokenLifetimeSeconds = 8 * 3600;
    }
  });

  /**
   * `endUser` opens the CUSTOM install page, then sends its callback by hand for an installation of the user App
   * in `org` with `code` (or none); `check` reads the answer. Nothing is stored.
   */
  async function handMadeCallback(
    endUser: string,
    org: string,
    code: string | undefined,
    check: (res: Response | null, popup: Page) => Promise<void>,
  ) {
    const before = latchkey.ctx.connectionScans.listConnections(ns.name).length;
    const theirs = gh.addInstallation(userApp.id, org);
    const context = await browser.newContext();
    const { popup } = await toInstallPage(context, 'github-user', endUser);
    const state = new URL(popup.url()).searchParams.get('state')!;
    const query = `installation_id=${theirs.id}&setup_action=install${code === undefined ? '' : `&code=${code}`}&state=${encodeURIComponent(state)}`;
    await check(await popup.goto(`${latchkey.url}/oauth/callback?${query}`), popup);
    await context.close();
    expect(latchkey.ctx.connectionScans.listConnections(ns.name)).toHaveLength(before);
  }

  it('refuses a callback without the user authorization code and stores nothing', () =>
    handMadeCallback('attacker-custom', 'not-mona-org', undefined, async (noCode) => {
      expect(noCode?.status()).toBe(400);
    }));

  it('answers a user authorization code the provider refuses as a refused installation, and stores nothing', () =>
    handMadeCallback('custom-refused-code', 'refused-code-org', 'a-code-github-never-issued', async (refused, popup) => {
      // The refresher's classification (reauthorization_required) is not the end user's answer: the flow's own 400 is.
      expect(refused?.status()).toBe(400);
      expect(await popup.textContent('main')).toContain('did not accept this installation');
    }));
});
