/**
 * Where a typed credential's check goes (src/modes/shared/credential-check.ts): under the provider's base URL,
 * or an absolute URL on its domain; never elsewhere. The round trips are in
 * test/connect/typed-credentials-verified.test.ts.
 */
import { verificationUrl } from '../../src/modes/shared/credential-check.js';
import type { ProviderResource } from '../../src/k8s/resources.js';

const provider = (path: string, baseUrl = 'https://api.example.test/v1'): ProviderResource => ({
  metadata: { name: 'acme' },
  spec: { displayName: 'Acme', authMode: 'API_KEY', proxy: { baseUrl }, verification: { path } },
});

describe('verification URL', () => {
  it('puts a relative path under the base URL, its path included', () => {
    expect(verificationUrl(provider('/me?limit=1'), {}).href).toBe('https://api.example.test/v1/me?limit=1');
  });

  it("takes an absolute URL on the provider's domain and refuses one elsewhere", () => {
    expect(verificationUrl(provider('https://auth.example.test/whoami'), {}).href).toBe('https://auth.example.test/whoami');
    expect(() => verificationUrl(provider('https://collector.example.net/keys'), {})).toThrow(/not on the provider's domain/);
  });
});
