/**
 * Credentials fitted to their Secret (src/domain/credentials.ts `fitCredentials`): `raw` trimmed by
 * whole fields, largest first, the fields Latchkey reads last; oversized credentials refused.
 */
import { CREDENTIALS_MAX_BYTES, RAW_MAX_BYTES, fitCredentials } from '../../src/domain/credentials.js';

const big = (kib: number) => 'x'.repeat(kib * 1024);

describe('fitCredentials', () => {
  it('leaves credentials within the limits as they are', () => {
    const c = { type: 'OAUTH2', access_token: 'at', raw: { access_token: 'at', expires_in: 3600, note: big(10) } };
    expect(fitCredentials(c)).toBe(c);
  });

  it('drops whole raw fields, the largest first, until raw fits; keeps what Latchkey reads', () => {
    const c = {
      type: 'OAUTH2',
      access_token: 'at',
      raw: { access_token: 'at', expires_in: 3600, scope: 'read', huge: big(100), large: big(50), small: big(1) },
    };
    const fitted = fitCredentials(c);
    expect(Object.keys(fitted.raw).sort()).toEqual(['access_token', 'expires_in', 'large', 'scope', 'small']);
    expect(JSON.stringify(fitted.raw).length).toBeLessThanOrEqual(RAW_MAX_BYTES);
    // Every field kept is whole (never a cut value), and the input is not changed.
    expect(fitted.raw.large).toBe(big(50));
    expect(c.raw).toHaveProperty('huge');
  });

  it('drops fields Latchkey reads only when the others were not enough', () => {
    const fitted = fitCredentials({ type: 'OAUTH2', raw: { scope: big(70), other: 'o' } });
    expect(fitted.raw).toEqual({});
  });

  it('refuses credentials too large for a Secret with provider_answer_too_large, naming no value', () => {
    const token = 'secret-token-' + big(CREDENTIALS_MAX_BYTES / 1024);
    let err: unknown;
    try {
      fitCredentials({ type: 'OAUTH2', access_token: token });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ kind: 'upstream', code: 'provider_answer_too_large' });
    expect((err as Error).message).not.toContain('secret-token');
  });
});
