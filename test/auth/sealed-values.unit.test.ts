import { openSessionToken, sealSessionToken, type SessionClaims } from '../../src/auth/session-tokens.js';
import { openFlowState, sealFlowState } from '../../src/auth/flow-state.js';
import { flowState } from '../support/fixtures.js';

const KEY = 'sk_test_0123456789abcdef';
const now = Date.UTC(2026, 10, 21, 12);
const claims: SessionClaims = {
  namespace: 'team-a',
  sid: 's1',
  endUser: { id: 'u1', email: 'u1@example.com' },
  allowedIntegrations: ['github'],
  exp: now / 1000 + 60,
};

describe('sealed session tokens and flow state', () => {
  it('round-trips, and hides the end user from whoever holds the token', () => {
    const token = sealSessionToken(claims, KEY);
    expect(token.startsWith('lks_1.')).toBe(true);
    expect(Buffer.from(token, 'utf8').toString()).not.toContain('u1@example.com');
    expect(openSessionToken(token, KEY, now)).toEqual({ ok: true, claims });
  });

  it('refuses a token sealed under another key, altered, expired or malformed', () => {
    const token = sealSessionToken(claims, KEY);
    expect(openSessionToken(token, 'sk_other', now)).toEqual({ ok: false, reason: 'invalid' });
    const [p, ns, body] = token.split('.');
    const flipped = Buffer.from(body!, 'base64url');
    flipped[20] ^= 1;
    expect(openSessionToken(`${p}.${ns}.${flipped.toString('base64url')}`, KEY, now)).toEqual({ ok: false, reason: 'invalid' });
    // The namespace in clear is bound to the ciphertext: moving the token to another namespace fails.
    expect(openSessionToken(`${p}.${Buffer.from('team-b').toString('base64url')}.${body}`, KEY, now)).toEqual({
      ok: false,
      reason: 'invalid',
    });
    expect(openSessionToken(token, KEY, now + 61_000)).toEqual({ ok: false, reason: 'expired' });
    expect(openSessionToken('not-a-token', KEY, now)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('keeps purposes apart: a session token is not a flow state', () => {
    const token = sealSessionToken(claims, KEY);
    expect(openFlowState(token, KEY, now).ok).toBe(false);
    const state = flowState({ codeVerifier: 'v', bh: 'h', exp: now / 1000 + 60 });
    const sealed = sealFlowState(state, KEY);
    expect(openFlowState(sealed, KEY, now)).toEqual({ ok: true, state });
    expect(openSessionToken(sealed, KEY, now).ok).toBe(false);
  });
});
