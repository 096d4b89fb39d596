/**
 * Which caller headers the proxy forwards, including the ones Nango's SDK sends: its
 * `Nango-Proxy-<name>` wrapping of the caller's headers and its proxy options (docs/proxy.md).
 */
import { checkBaseUrlOverride, forwardedRequestHeaders, rawHeaderValue, returnedResponseHeaders } from '../../src/proxy/headers.js';

describe('forwardedRequestHeaders', () => {
  it('forwards ordinary headers and keeps Latchkey, Nango and hop-by-hop headers behind', () => {
    const out = forwardedRequestHeaders({
      authorization: 'Bearer sk',
      host: 'latchkey',
      'connection-id': 'c',
      'provider-config-key': 'p',
      retries: '2',
      connection: 'keep-alive, x-hop',
      'x-hop': 'h',
      'latchkey-trace': 't',
      'nango-activity-log-id': '',
      'base-url-override': '',
      decompress: 'true',
      'retry-on': '500',
      'forward-headers-on-redirect': 'true',
      accept: 'application/json',
      'x-custom': 'v',
    });
    expect(out).toEqual({ accept: 'application/json', 'x-custom': 'v' });
  });

  it('unwraps Nango-Proxy-<name> to <name>, replacing an unprefixed header of that name', () => {
    const out = forwardedRequestHeaders({
      'x-tenant': 'plain',
      'nango-proxy-x-tenant': 'wrapped',
      'nango-proxy-x-request-id': 'r-1',
      'nango-proxy-decompress': 'yes', // the caller's own header of that name, not Nango's option
    });
    expect(out).toEqual({ 'x-tenant': 'wrapped', 'x-request-id': 'r-1', decompress: 'yes' });
  });

  it('applies the same rules to an unwrapped name (no Host, hop-by-hop or Latchkey header through the wrapper)', () => {
    const out = forwardedRequestHeaders({
      'nango-proxy-host': 'evil.example',
      'nango-proxy-transfer-encoding': 'chunked',
      'nango-proxy-connection-id': 'other',
      'nango-proxy-latchkey-x': 'x',
      'nango-proxy-nango-proxy-x': 'x',
      'nango-proxy-': 'empty name',
    });
    expect(out).toEqual({});
  });
});

describe('forwardedRequestHeaders with added headers', () => {
  it("puts the credentials' headers in last, replacing the caller's header of that name", () => {
    const out = forwardedRequestHeaders(
      { 'x-api-key': 'the caller’s own', 'nango-proxy-x-api-key': 'wrapped', accept: 'application/json' },
      { 'x-api-key': 'stored key' },
    );
    expect(out).toEqual({ 'x-api-key': 'stored key', accept: 'application/json' });
  });
});

describe('returnedResponseHeaders', () => {
  it('returns the raw list without hop-by-hop headers and those Connection names, names as sent and repeats kept', () => {
    const kept = [
      ['Content-Type', 'application/json'],
      ['Set-Cookie', 'a=1'],
      ['Set-Cookie', 'b=2'],
      ['X-RateLimit-Remaining', '10'],
    ];
    const dropped = [
      ['Connection', 'keep-alive, X-Hop'],
      ['Keep-Alive', 'timeout=5'],
      ['X-Hop', 'dropped'],
      ['Transfer-Encoding', 'chunked'],
    ];
    const raw = [kept[0]!, ...dropped, ...kept.slice(1)].flat();
    expect(returnedResponseHeaders(raw, { decompressed: false })).toEqual(kept.flat());
  });

  it('drops the coding and length of a body it decompresses', () => {
    const raw = ['Content-Encoding', 'gzip', 'Content-Length', '120', 'ETag', '"x"'];
    expect(returnedResponseHeaders(raw, { decompressed: true })).toEqual(['ETag', '"x"']);
    expect(returnedResponseHeaders(raw, { decompressed: false })).toEqual(raw);
  });
});

describe('rawHeaderValue', () => {
  it('finds the first value of a name whatever its case', () => {
    expect(rawHeaderValue(['Date', 'x', 'KEEP-ALIVE', 'timeout=5', 'keep-alive', 'timeout=9'], 'keep-alive')).toBe('timeout=5');
    expect(rawHeaderValue(['Date', 'x'], 'keep-alive')).toBeUndefined();
  });
});

describe('checkBaseUrlOverride', () => {
  it("accepts the SDK's empty header and its absence", () => {
    expect(() => checkBaseUrlOverride({})).not.toThrow();
    expect(() => checkBaseUrlOverride({ 'base-url-override': '' })).not.toThrow();
    expect(() => checkBaseUrlOverride({ 'base-url-override': '  ' })).not.toThrow();
  });

  it('refuses any value with a 400 code that does not repeat the value', () => {
    for (const value of ['https://elsewhere.example', ['', 'http://169.254.169.254']]) {
      let caught: unknown;
      try {
        checkBaseUrlOverride({ 'base-url-override': value });
      } catch (err) {
        caught = err;
      }
      expect(caught).toMatchObject({ kind: 'invalid_input', code: 'base_url_override_unsupported' });
      expect((caught as Error).message).not.toMatch(/elsewhere|169\.254/);
    }
  });
});
