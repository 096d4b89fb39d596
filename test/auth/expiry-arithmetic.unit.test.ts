/** When a token counts as about to expire, and when its refresh is due (no cluster: pure functions). */
import { isAboutToExpire, nextRefreshAt, refreshMarginMs } from '../../src/auth/refresh/token-refresher.js';

describe('expiry arithmetic', () => {
  const cfg = { refreshMarginSeconds: 300, refreshMarginRatio: 0.25 };
  it('uses min(margin, lifetime × ratio)', () => {
    expect(refreshMarginMs(undefined, cfg)).toBe(300_000);
    expect(refreshMarginMs(3600, cfg)).toBe(300_000);
    expect(refreshMarginMs(120, cfg)).toBe(30_000);
    expect(nextRefreshAt(new Date(1_000_000), 120, cfg).getTime()).toBe(970_000);
    const creds = { type: 'OAUTH2', access_token: 'x', expires_at: new Date(100_000).toISOString(), raw: { expires_in: 120 } };
    expect(isAboutToExpire(creds, 69_000, cfg)).toBe(false);
    expect(isAboutToExpire(creds, 70_000, cfg)).toBe(true);
    expect(isAboutToExpire({ type: 'OAUTH2', access_token: 'x', raw: {} }, Date.now(), cfg)).toBe(false);
  });
});
