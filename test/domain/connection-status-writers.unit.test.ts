/** The owners of a Connection's status fields, and the shared status rules against them. */
import { CONNECTION_STATUS_OWNERS, ConnectionStatusWriter, fieldsNotOwned } from '../../src/domain/connection-status-writers.js';
import { statusAfterNewCredentials, statusAfterRefreshFailure } from '../../src/domain/connection-state.js';

const settings = { refreshMarginSeconds: 300, refreshMarginRatio: 0.25 };
const before = {
  conditions: [{ type: 'Ready', status: 'True', reason: 'Fine', message: '', lastTransitionTime: '2026-01-01T00:00:00.000Z' }],
  observedGeneration: 1,
  lastFetchedAt: '2026-01-01T00:00:00.000Z',
  refreshAttempts: 2,
  errors: [{ type: 'auth', logId: 'l1', message: 'refused' }],
};
const expiring = { type: 'OAUTH2' as const, access_token: 'a', expires_at: '2026-06-01T00:00:00.000Z', raw: {} };

it('lists one or more writers for every field, and only known writers', () => {
  const writers = new Set<string>(Object.values(ConnectionStatusWriter));
  for (const owners of Object.values(CONNECTION_STATUS_OWNERS)) {
    expect(owners.length).toBeGreaterThan(0);
    for (const w of owners) expect(writers.has(w)).toBe(true);
  }
  expect(CONNECTION_STATUS_OWNERS.conditions).toEqual([ConnectionStatusWriter.Reconciler]);
  expect(CONNECTION_STATUS_OWNERS.lastFetchedAt).toEqual([ConnectionStatusWriter.LastFetched]);
});

it('names the changed fields a writer does not own, unchanged ones never', () => {
  expect(fieldsNotOwned(ConnectionStatusWriter.LastFetched, before, { ...before, lastFetchedAt: 'later' })).toEqual([]);
  expect(fieldsNotOwned(ConnectionStatusWriter.Metadata, before, { ...before, updatedAt: 'now', refreshAttempts: 0 })).toEqual([
    'refreshAttempts',
  ]);
  const { conditions: _dropped, ...withoutConditions } = before;
  expect(fieldsNotOwned(ConnectionStatusWriter.Service, before, withoutConditions)).toEqual(['conditions']);
  expect(fieldsNotOwned(ConnectionStatusWriter.Scheduler, before, { ...before, surprise: 1 })).toEqual(['surprise']);
});

it('the shared rules change only what their writers own', () => {
  const now = Date.parse('2026-05-01T00:00:00.000Z');
  const authorized = statusAfterNewCredentials(before, expiring, settings, now, 'authorized');
  expect(fieldsNotOwned(ConnectionStatusWriter.Service, before, authorized)).toEqual([]);
  const refreshed = statusAfterNewCredentials(before, expiring, settings, now, 'refreshed');
  expect(fieldsNotOwned(ConnectionStatusWriter.Refresher, before, refreshed)).toEqual([]);
  expect(fieldsNotOwned(ConnectionStatusWriter.Reconciler, before, refreshed)).toEqual([]);
  const failed = statusAfterRefreshFailure(before, { type: 'auth', logId: 'l2', message: 'again', refreshFailure: 'transient' });
  expect(fieldsNotOwned(ConnectionStatusWriter.Refresher, before, failed)).toEqual([]);
  // The service stores credentials: it never touches what the reconciler or last-fetched own.
  expect(fieldsNotOwned(ConnectionStatusWriter.Service, before, refreshed)).toEqual(['lastRefreshedAt']);
});
