/** Providers' answers that say the token lacks a scope (RFC 6750 §3.1, GitHub's scope headers), and the error's words. */
import { scopeRefusal, scopeRefusalMessage } from '../../src/proxy/insufficient-scope.js';

const headers = (h: Record<string, string>) => (name: string) => h[name];

describe('scope refusals', () => {
  it("reads RFC 6750's insufficient_scope challenge and its scope", () => {
    const r = scopeRefusal(
      403,
      headers({
        'www-authenticate':
          'Bearer realm="example", error="insufficient_scope", error_description="needs more", scope="https://www.googleapis.com/auth/drive.readonly"',
      }),
    );
    expect(r).toEqual({ needed: ['https://www.googleapis.com/auth/drive.readonly'], anyOf: false });
    expect(scopeRefusal(403, headers({ 'www-authenticate': 'Bearer error=insufficient_scope' }))).toEqual({ needed: [], anyOf: false });
  });

  it("reads GitHub's X-Accepted-OAuth-Scopes when none of them is the token's", () => {
    const r = scopeRefusal(403, headers({ 'x-oauth-scopes': 'read:user, user:email', 'x-accepted-oauth-scopes': 'repo, public_repo' }));
    expect(r).toEqual({ needed: ['repo', 'public_repo'], anyOf: true, granted: ['read:user', 'user:email'] });
    // The token has one of them: the 403 is about something else (a rate limit, a permission), passed on as it is.
    expect(scopeRefusal(403, headers({ 'x-oauth-scopes': 'repo', 'x-accepted-oauth-scopes': 'repo, public_repo' }))).toBeUndefined();
  });

  it('is nothing for other statuses and other challenges', () => {
    const challenge = { 'www-authenticate': 'Bearer error="insufficient_scope", scope="a"' };
    expect(scopeRefusal(401, headers(challenge))).toBeUndefined();
    expect(scopeRefusal(403, headers({ 'www-authenticate': 'Bearer error="invalid_token"' }))).toBeUndefined();
    expect(scopeRefusal(403, headers({ 'www-authenticate': 'Basic realm="x"' }))).toBeUndefined();
    expect(scopeRefusal(403, headers({}))).toBeUndefined();
  });

  it('leaves out scope names that are not plain printable text', () => {
    const r = scopeRefusal(
      403,
      headers({ 'www-authenticate': `Bearer error="insufficient_scope", scope="ok ${'x'.repeat(300)} bad\\"q"` }),
    );
    expect(r?.needed).toEqual(['ok']);
  });

  it('names the missing scope, what the grant has and how to ask for more', () => {
    const message = scopeRefusalMessage({ needed: ['drive'], anyOf: false }, 'Google Drive', ['openid', 'calendar'], 'gdrive');
    expect(message).toBe(
      'Google Drive refused the call: the connection\'s grant lacks the scope "drive" (granted: openid calendar). Reconnect it asking for more scopes (a reconnect session with integrations_config_defaults.gdrive.connection_config.oauth_scopes_override).',
    );
    expect(scopeRefusalMessage({ needed: ['repo', 'public_repo'], anyOf: true, granted: [] }, 'GitHub', undefined, 'gh')).toContain(
      'lacks one of the scopes "repo", "public_repo".',
    );
    expect(scopeRefusalMessage({ needed: [], anyOf: false }, 'X', undefined, 'x')).toContain('lacks a scope it does not name.');
  });
});
