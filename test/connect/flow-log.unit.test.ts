/**
 * What a provider answered, as the Connect flows log it (src/connect/flow-log.ts `providerAnswer`):
 * the status, OAuth error and description stay; what the request carried and the provider quoted
 * back (found by secrets-in-connect-logs.test.ts: code, PKCE verifier, client secret) does not.
 */
import { providerAnswer } from '../../src/connect/flow-log.js';

describe('providerAnswer', () => {
  it("keeps the token endpoint's status, error and description", () => {
    const err = { status: 401, error: 'invalid_client', error_description: 'client authentication failed', message: 'x' };
    expect(providerAnswer(err)).toBe('the token endpoint answered 401 invalid_client: client authentication failed');
    expect(providerAnswer(new Error('provider answered 401 at /access_token'))).toBe('provider answered 401 at /access_token');
  });

  it('removes the values the request carried wherever the provider quotes them, and what the log rules name', () => {
    const code = 'NWWnG2sabsFyf4tv4XQ0eXp1FJEaaxtfWmocS-cV4Ku';
    const verifier = '7yoS7ynOAHsRG_a0-fhIPjtvEs_HYaiQTWIi-sjB6eU';
    const clientSecret = 'logscan-client-secret-06df1e9731e7031426279895';
    const err = {
      status: 400,
      error: 'invalid_grant',
      error_description: `authorization code ${code} is invalid; code_verifier ${verifier} for client c1 with secret ${clientSecret}; refresh_token=abc123def`,
    };
    const text = providerAnswer(err, [code, verifier, clientSecret, undefined]);
    expect(text).toBe(
      'the token endpoint answered 400 invalid_grant: authorization code [redacted] is invalid; code_verifier [redacted] for client c1 with secret [redacted]; refresh_token=[redacted]',
    );
    expect(providerAnswer(new Error(`refused ${clientSecret}`), [clientSecret])).toBe('refused [redacted]');
  });
});
