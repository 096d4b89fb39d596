import {
  mergeCredentials,
  newRefreshFailure,
  statusAfterNewCredentials,
  statusAfterRefreshFailure,
  type StatusErrorEntry,
} from '../../src/domain/connection-state.js';

const settings = { refreshMarginSeconds: 300, refreshMarginRatio: 0.5 };
const now = Date.UTC(2025, 0, 1, 12, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();
const authError: StatusErrorEntry = { type: 'auth', logId: 'ev-1', message: 'refresh failed', refreshFailure: 'permanent' };
const otherError: StatusErrorEntry = { type: 'sync', logId: 'ev-2' };

describe('statusAfterNewCredentials', () => {
  it('recomputes expiry and next refresh, resets attempts, clears credential errors and keeps the rest', () => {
    const before = {
      expiresAt: iso(now - 1000),
      nextRefreshAt: iso(now - 60_000),
      refreshAttempts: 4,
      lastFetchedAt: iso(now - 5000),
      errors: [authError, otherError],
    };
    const credentials = { type: 'OAUTH2', access_token: 'a', expires_at: iso(now + 3600_000) };
    const after = statusAfterNewCredentials(before, credentials, settings, now, 'authorized');
    expect(after).toEqual({
      expiresAt: iso(now + 3600_000),
      nextRefreshAt: iso(now + 3600_000 - 300_000),
      refreshAttempts: 0,
      updatedAt: iso(now),
      lastFetchedAt: before.lastFetchedAt,
      errors: [otherError],
    });
    expect(before.refreshAttempts).toBe(4); // not mutated
  });

  it('uses the lifetime ratio when it is the smaller margin', () => {
    const credentials = { type: 'OAUTH2', access_token: 'a', expires_at: iso(now + 120_000), raw: { expires_in: 120 } };
    expect(statusAfterNewCredentials(undefined, credentials, settings, now, 'authorized').nextRefreshAt).toBe(iso(now + 60_000));
  });

  it('removes expiry and next refresh for credentials that do not expire', () => {
    const after = statusAfterNewCredentials(
      { expiresAt: iso(now), nextRefreshAt: iso(now), errors: [authError] },
      { type: 'API_KEY', apiKey: 'k' },
      settings,
      now,
      'authorized',
    );
    expect(after).toEqual({ refreshAttempts: 0, updatedAt: iso(now), errors: [] });
  });

  it('stamps lastRefreshedAt only after a refresh', () => {
    const creds = { type: 'OAUTH2', access_token: 'a', expires_at: iso(now + 3600_000) };
    expect(statusAfterNewCredentials(undefined, creds, settings, now, 'refreshed').lastRefreshedAt).toBe(iso(now));
    expect(statusAfterNewCredentials(undefined, creds, settings, now, 'authorized').lastRefreshedAt).toBeUndefined();
  });
});

describe('mergeCredentials', () => {
  const old = { type: 'OAUTH2', access_token: 'old-access', refresh_token: 'old-refresh' };

  it('keeps the old refresh token when the new credentials carry none', () => {
    expect(mergeCredentials(old, { type: 'OAUTH2', access_token: 'new-access' })).toEqual({
      type: 'OAUTH2',
      access_token: 'new-access',
      refresh_token: 'old-refresh',
    });
  });

  it('takes a new refresh token, and nothing from credentials of another type or from none', () => {
    expect(mergeCredentials(old, { type: 'OAUTH2', access_token: 'n', refresh_token: 'new-refresh' }).refresh_token).toBe('new-refresh');
    expect(mergeCredentials(old, { type: 'API_KEY', apiKey: 'k' })).toEqual({ type: 'API_KEY', apiKey: 'k' });
    expect(mergeCredentials(undefined, { type: 'OAUTH2', access_token: 'n' })).toEqual({ type: 'OAUTH2', access_token: 'n' });
  });
});

describe('refresh failures', () => {
  it('counts the attempt and keeps the last ten errors', () => {
    let status: { refreshAttempts?: number; errors?: StatusErrorEntry[] } = {};
    for (let i = 0; i < 12; i++) status = statusAfterRefreshFailure(status, { ...authError, logId: `ev-${i}` });
    expect(status.refreshAttempts).toBe(12);
    expect(status.errors!.map((e) => e.logId)).toEqual(Array.from({ length: 10 }, (_, i) => `ev-${i + 2}`));
  });

  it('finds a refresh failure recorded since, by its typed field and not its message', () => {
    const message = { type: 'auth', logId: 'ev-9', message: 'Token refresh failed (reauthorization required): x' };
    expect(newRefreshFailure({ errors: [message] }, new Set())).toBeUndefined();
    expect(newRefreshFailure({ errors: [authError] }, new Set(['ev-1']))).toBeUndefined();
    expect(newRefreshFailure({ errors: [otherError, authError] }, new Set(['ev-2']))).toBe(authError);
    expect(newRefreshFailure(undefined, new Set())).toBeUndefined();
  });
});
