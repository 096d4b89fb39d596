/**
 * The Integration's client in a provider's proxy templates (src/proxy/credential-injection.ts): Etsy's API takes
 * the app's key as `x-api-key: keystring:shared_secret` on every call, beside the connection's bearer token.
 * The values are read for each request (a rotated client secret applies at once), and a template naming a
 * client value the Integration lacks is a clear 400, never a header with a hole in it.
 */
import { Injections, templatedInjection } from '../../src/proxy/credential-injection.js';
import type { ProviderSpec } from '../../src/k8s/resources.js';
import type { StoredCredentials } from '../../src/k8s/store.js';

const spec: ProviderSpec = {
  displayName: 'Etsy',
  authMode: 'OAUTH2',
  proxy: { baseUrl: 'https://api.etsy.com', headers: { 'x-api-key': '${clientId}:${clientSecret}' } },
};
const credentials = { type: 'OAUTH2', access_token: '12345678.token', raw: {} } as unknown as StoredCredentials;

describe("the Integration's client in proxy templates", () => {
  it('fills ${clientId} and ${clientSecret} from the Integration', () => {
    const injection = templatedInjection(spec, credentials, undefined, { clientId: 'keystring', clientSecret: 'shh' });
    expect(injection.headers).toEqual({ 'x-api-key': 'keystring:shh' });
  });

  it('reads the client for every request: a rotated secret is sent at once', () => {
    const injections = new Injections();
    let secret = 'first';
    const client = () => ({ clientId: 'keystring', clientSecret: secret });
    expect(injections.of(spec, credentials, undefined, client).headers['x-api-key']).toBe('keystring:first');
    secret = 'second';
    expect(injections.of(spec, credentials, undefined, client).headers['x-api-key']).toBe('keystring:second');
  });

  it('refuses with missing_credentials when the Integration has no such value', () => {
    expect(() => templatedInjection(spec, credentials, undefined, { clientId: 'keystring' })).toThrow(
      expect.objectContaining({ code: 'missing_credentials' }),
    );
  });
});
