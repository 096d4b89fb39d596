import { isRetryableStatus, MAX_RETRY_AFTER_MS, parseRetryAfter } from '../../src/domain/retry.js';

describe('isRetryableStatus', () => {
  it('retries 408, 429 and 5xx except 501', () => {
    for (const s of [408, 429, 500, 502, 503, 504, 599]) expect([s, isRetryableStatus(s)]).toEqual([s, true]);
  });
  it('does not retry success, redirects, other 4xx or 501', () => {
    for (const s of [200, 204, 301, 400, 401, 403, 404, 409, 413, 422, 501, 600]) expect([s, isRetryableStatus(s)]).toEqual([s, false]);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2025, 0, 1, 12, 0, 0);

  it('reads delta-seconds as milliseconds', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
  });

  it('reads an HTTP date relative to now, a past date as 0', () => {
    expect(parseRetryAfter(new Date(now + 30_000).toUTCString(), now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 01 Jan 2025 12:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter(new Date(now - 5_000).toUTCString(), now)).toBe(0);
  });

  it('takes the first of repeated headers (node gives an array)', () => {
    expect(parseRetryAfter(['3', '9'], now)).toBe(3000);
  });

  it('is bounded: a huge value is capped, by default and by the caller', () => {
    expect(parseRetryAfter('99999999999999999999', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter(new Date(now + 10 * MAX_RETRY_AFTER_MS).toUTCString(), now)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter('600', now, 60_000)).toBe(60_000);
  });

  it('ignores absent and malformed values', () => {
    for (const v of [undefined, null, '', '   ', 'soon', '-1', '1.5', '2025-01-01T12:00:00Z', '10s', []]) {
      expect([v, parseRetryAfter(v, now)]).toEqual([v, undefined]);
    }
  });
});
