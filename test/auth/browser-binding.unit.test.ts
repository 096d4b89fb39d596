/** The browser binding of OAuth flows: only the exact cookie value whose hash is sealed in the state matches. */
import { browserBindingHash, browserBindingMatches, isBrowserBinding, newBrowserBinding } from '../../src/auth/flow-state.js';
import { flowState } from '../support/fixtures.js';

function stateFor(binding: string) {
  return flowState({ bh: browserBindingHash(binding), exp: 0 });
}

describe('browser binding', () => {
  it('is 256 random bits in base64url, different each time', () => {
    const a = newBrowserBinding();
    expect(isBrowserBinding(a)).toBe(true);
    expect(a).not.toBe(newBrowserBinding());
  });

  it('matches the starting browser only; a missing, other or malformed cookie does not', () => {
    const mine = newBrowserBinding();
    const state = stateFor(mine);
    expect(browserBindingMatches(state, mine)).toBe(true);
    expect(browserBindingMatches(state, undefined)).toBe(false);
    expect(browserBindingMatches(state, newBrowserBinding())).toBe(false);
    expect(browserBindingMatches(state, `${mine}x`)).toBe(false);
    expect(browserBindingMatches(state, state.bh)).toBe(false); // the hash itself is not the cookie
    expect(browserBindingMatches({ ...state, bh: undefined as unknown as string }, mine)).toBe(false);
  });
});
