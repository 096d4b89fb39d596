import { decideRefreshRequest, parseRefreshRequestRecord, type RefreshRequestRecord } from '../../src/domain/refresh-request.js';

const record = (requestedAt: string, outcome: RefreshRequestRecord['outcome'] = 'Refreshed'): RefreshRequestRecord => ({
  requestedAt,
  outcome,
  at: '2026-01-01T00:00:05Z',
});

describe('a refresh request', () => {
  it('is refreshed when nothing has handled it and no refresh came after it', () => {
    expect(decideRefreshRequest('2026-01-01T10:00:00.000Z', undefined, '2026-01-01T09:00:00Z')).toEqual({
      kind: 'refresh',
      requestedAt: '2026-01-01T10:00:00.000Z',
    });
    expect(decideRefreshRequest('2026-01-01T10:00:00.000Z', record('2026-01-01T08:00:00.000Z'), undefined).kind).toBe('refresh');
  });

  it('counts once: the same value again (re-applied, retried) is the request the record names', () => {
    for (const outcome of ['InProgress', 'Refreshed', 'Failed', 'NotRenewable'] as const)
      expect(decideRefreshRequest('2026-01-01T10:00:00.000Z', record('2026-01-01T10:00:00.000Z', outcome), undefined)).toEqual({
        kind: 'none',
      });
  });

  it('is satisfied without a token call when the connection was refreshed at or after the requested time (stale)', () => {
    expect(decideRefreshRequest('2026-01-01T10:00:00.000Z', undefined, '2026-01-01T10:00:00.000Z')).toEqual({
      kind: 'satisfied',
      requestedAt: '2026-01-01T10:00:00.000Z',
      lastRefreshedAt: '2026-01-01T10:00:00.000Z',
    });
    expect(decideRefreshRequest('2026-01-01T10:00:00.000Z', undefined, '2026-01-01T11:00:00Z').kind).toBe('satisfied');
  });

  it('is invalid when its value is not a time, and nothing when there is none', () => {
    expect(decideRefreshRequest('yesterday', undefined, undefined)).toEqual({ kind: 'invalid', requestedAt: 'yesterday' });
    expect(decideRefreshRequest(undefined, undefined, undefined)).toEqual({ kind: 'none' });
    expect(decideRefreshRequest('', record('x'), undefined)).toEqual({ kind: 'none' });
  });

  it('reads its record back, and a hand-edited one as none', () => {
    const r = { ...record('2026-01-01T10:00:00.000Z'), message: 'Refreshed as requested.' };
    expect(parseRefreshRequestRecord(JSON.stringify(r))).toEqual(r);
    expect(parseRefreshRequestRecord('not json')).toBeUndefined();
    expect(parseRefreshRequestRecord(JSON.stringify({ requestedAt: 'x', outcome: 'Whatever' }))).toBeUndefined();
    expect(parseRefreshRequestRecord(undefined)).toBeUndefined();
  });
});
