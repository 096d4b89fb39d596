/**
 * The revocation request each declared shape sends (src/auth/grant-revocation.ts): RFC 7009 with the
 * client authenticated as at the token endpoint, a bearer revocation with no body, and a templated URL.
 * The round trips against real peers are in test/connections/revocation.test.ts.
 */
import { revocationRequest } from '../../src/auth/grant-revocation.js';
import type { ProviderSpec, RevocationSpec } from '../../src/k8s/resources.js';

const spec = (extra: Partial<ProviderSpec> = {}): ProviderSpec => ({ displayName: 'Acme', authMode: 'OAUTH2', ...extra });
const client = { clientId: 'client id', clientSecret: 'client-secret' };
const refresh = { value: 'rt-value', hint: 'refresh_token' as const };

describe('revocation request', () => {
  it('RFC 7009 with HTTP Basic when the token endpoint takes it (tokenRequestAuthMethod: basic)', () => {
    const revocation: RevocationSpec = { url: 'https://id.example.test/revoke' };
    const { url, init } = revocationRequest(revocation, spec({ tokenRequestAuthMethod: 'basic' }), refresh, client, undefined);
    expect(url).toBe('https://id.example.test/revoke');
    expect(init.method).toBe('POST');
    const headers = init.headers as Record<string, string>;
    expect(headers.authorization).toBe(`Basic ${Buffer.from('client%20id:client-secret').toString('base64')}`);
    expect(headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(init.body as string))).toEqual({ token: 'rt-value', token_type_hint: 'refresh_token' });
  });

  it('a bearer revocation sends the token as the Authorization header and no body', () => {
    const revocation: RevocationSpec = { url: 'https://api.example.test/token/revoke', token: 'access_token', tokenIn: 'bearer' };
    const { init } = revocationRequest(revocation, spec(), { value: 'at-value', hint: 'access_token' }, client, undefined);
    expect((init.headers as Record<string, string>).authorization).toBe('Bearer at-value');
    expect(init.body).toBeUndefined();
  });

  it('fills the client ID and the connection configuration into the URL, on the declared hosts only', () => {
    const revocation: RevocationSpec = { url: 'https://${connectionConfig.host}/apps/${clientId}/grant', clientAuth: 'none' };
    const provider = spec({ connectionConfiguration: [{ name: 'host', hostSuffixes: ['example.test'] }] });
    expect(revocationRequest(revocation, provider, refresh, client, { host: 'eu.example.test' }).url).toBe(
      'https://eu.example.test/apps/client%20id/grant',
    );
    expect(() => revocationRequest(revocation, provider, refresh, client, { host: 'evil.example.net' })).toThrow();
  });
});
