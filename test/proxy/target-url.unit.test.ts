/** Unit test: the proxy's fast target (no URL object per request) says what targetUrl says, and the path check (no cluster needed). */
import { LatchkeyError } from '../../src/domain/errors.js';
import { checkProxyPath, targetUrl, upstreamTarget, type QueryOverrides } from '../../src/proxy/target-url.js';
import { semicolonDotSegments, semicolonPathsKept } from '../support/proxy-paths.js';

const cases: Array<[string, string, string, QueryOverrides]> = [
  ['https://api.example.test', '/users', '', []],
  ['https://api.example.test/v2/', '/users/42', '?page=2&per_page=50', []],
  ['http://127.0.0.1:8080/base', '/a/b', 'x=1', [['api_key', 'k 1&2']]],
  ['https://[::1]:8443', '/items', '?api_key=caller&z=9', [['api_key', 'ours']]],
  ['https://api.example.test', '/search', '?q=a b|c"d', []], // characters the URL setters encode
  ['https://api.example.test', '/files/naïve name.txt', '', []],
  ['https://api.example.test', '', '', []],
  ['https://api.example.test', '/p', '??double', []],
];

describe('upstreamTarget', () => {
  it.each(cases)('%s %s %s: the same target as targetUrl', (base, path, query, overrides) => {
    const url = targetUrl(base, path, query, overrides);
    const target = upstreamTarget(base, path, query, overrides);
    expect(target.path).toBe(`${url.pathname}${url.search}`);
    expect(target.url().href).toBe(url.href);
    expect(target.host).toBe(url.host);
    expect(target.protocol).toBe(url.protocol);
    expect(target.hostname).toBe(url.hostname.replace(/^\[|\]$/g, ''));
    expect(target.port).toBe(url.port === '' ? undefined : Number(url.port));
  });
});

describe('checkProxyPath', () => {
  it.each(semicolonDotSegments)('refuses %s (a dot segment once ";" parameters are dropped)', (path) => {
    let thrown: unknown;
    try {
      checkProxyPath(path);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(LatchkeyError);
    expect([(thrown as LatchkeyError).kind, (thrown as LatchkeyError).code]).toEqual(['invalid_input', 'invalid_proxy_path']);
  });

  it.each(semicolonPathsKept)('keeps %s unchanged (";" outside a dot segment)', (path) => {
    expect(checkProxyPath(path)).toBe(path);
    expect(targetUrl('https://api.example.test/base', path, '').pathname).toBe(`/base${path}`);
  });

  it.each(['/@evil.test/x', '/user@evil.test/x', '/a@b'])('refuses %s (an "@" in the first segment reads as user info)', (path) => {
    expect(() => checkProxyPath(path)).toThrow(LatchkeyError);
  });

  it.each(['/api/v10/users/@me', '/users/a@b.com/files'])('keeps %s unchanged (an "@" past the first segment, behind a "/")', (path) => {
    expect(checkProxyPath(path)).toBe(path);
    const url = targetUrl('https://api.example.test/base', path, '');
    expect([url.host, url.username, url.pathname]).toEqual(['api.example.test', '', `/base${path}`]);
  });
});
