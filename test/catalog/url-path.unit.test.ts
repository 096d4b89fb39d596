/**
 * The urlPath rule (src/catalog/url-path.ts, src/catalog/connection-config.ts): a self-managed server's context
 * path filled after the host with its `/` kept, empty or absent filling nothing; values that could leave the
 * path or climb out of it refused; a urlPath key anywhere but a path refused by the catalog rules, and the host
 * check of every URL unchanged. On the shipped Jira and Confluence Data Center manifests and on made-up Providers.
 */
import {
  checkConnectionConfig,
  configFields,
  fillProviderUrl,
  hostKeys,
  templateHost,
  urlPathProblems,
} from '../../src/catalog/connection-config.js';
import { withIntegrationConfig } from '../../src/catalog/integration-config.js';
import { fillTemplate } from '../../src/catalog/template.js';
import { urlPathProblem } from '../../src/catalog/url-path.js';
import { validateProvider } from '../../src/controller/reconcilers/provider.js';
import { LatchkeyError } from '../../src/domain/errors.js';
import type { ConnectionConfigField, ProviderSpec } from '../../src/k8s/resources.js';
import { catalogSpec } from '../support/catalog-files.js';

const HOST: ConnectionConfigField = { name: 'host', anyHost: true, setBy: 'integration' };
const CONTEXT: ConnectionConfigField = { name: 'contextPath', urlPath: true, setBy: 'integration', required: false };

function provider(tokenUrl: string, fields: ConnectionConfigField[] = [HOST, CONTEXT]): ProviderSpec {
  return {
    displayName: 'Self-managed',
    authMode: 'OAUTH2',
    authorizationUrl: tokenUrl.replace(/token$/, 'authorize'),
    tokenUrl,
    connectionConfiguration: fields,
  } as ProviderSpec;
}

function code(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (err instanceof LatchkeyError) return err.code;
    throw err;
  }
}

describe('urlPath values', () => {
  it('accepts a context path of one or more segments, and the empty string', () => {
    for (const ok of ['', '/jira', '/a/b', '/tools/jira-8.x_~1']) expect(urlPathProblem(ok)).toBeUndefined();
  });

  it('refuses .. and . segments, //, a trailing /, encoded or reserved characters, no leading /, and long values', () => {
    for (const bad of [
      '/..',
      '/jira/..',
      '/./jira',
      '//jira',
      '/jira//rest',
      '/jira/',
      '/',
      'jira',
      '/ji%2Fra',
      '/%2e%2e',
      '/jira?x=1',
      '/jira#x',
      '/@evil.example',
      '/jira\\..',
      '/jira bar',
      '/jïra',
      `/${'a'.repeat(255)}`,
    ])
      expect([bad, urlPathProblem(bad)]).toEqual([bad, expect.any(String)]);
  });

  it('fills the value as it is, / kept; empty or absent fills nothing; a bad value is refused by the filler too', () => {
    const t = 'https://${connectionConfig.host}${connectionConfig.contextPath}/rest/x';
    const pathKeys = new Set(['contextPath']);
    expect(fillTemplate(t, { host: 'jira.example.com', contextPath: '/tools/jira' }, { pathKeys })).toBe(
      'https://jira.example.com/tools/jira/rest/x',
    );
    expect(fillTemplate(t, { host: 'jira.example.com', contextPath: '' }, { pathKeys })).toBe('https://jira.example.com/rest/x');
    expect(fillTemplate(t, { host: 'jira.example.com' }, { pathKeys })).toBe('https://jira.example.com/rest/x');
    expect(code(() => fillTemplate(t, { host: 'jira.example.com', contextPath: '/..' }, { pathKeys }))).toBe('invalid_connection_config');
    // Without the rule a value is one percent-encoded component, as before.
    expect(fillTemplate(t, { host: 'jira.example.com', contextPath: '/jira' })).toBe('https://jira.example.com%2Fjira/rest/x');
  });
});

describe('Jira and Confluence Data Center under a context path', () => {
  for (const [name, expected] of [
    [
      'jira-data-center',
      {
        authorizationUrl: 'https://example.com/jira/rest/oauth2/latest/authorize',
        tokenUrl: 'https://example.com/jira/rest/oauth2/latest/token',
        base: 'https://example.com/jira/rest/api/latest',
      },
    ],
    [
      'confluence-data-center',
      {
        authorizationUrl: 'https://example.com/jira/rest/oauth2/latest/authorize',
        tokenUrl: 'https://example.com/jira/rest/oauth2/latest/token',
        base: 'https://example.com/jira',
      },
    ],
  ] as const) {
    it(`${name}: every URL under the context path; none without it; a stored connection without the key reads as none`, () => {
      const spec = catalogSpec(name);
      const urls = (config: Record<string, unknown>) => {
        const filled = checkConnectionConfig(spec, config);
        return {
          authorizationUrl: fillProviderUrl(spec, spec.authorizationUrl!, filled),
          tokenUrl: fillProviderUrl(spec, spec.tokenUrl!, filled),
          base: fillProviderUrl(spec, spec.proxy!.baseUrl!, filled),
        };
      };
      expect(urls({ host: 'example.com', contextPath: '/jira' })).toEqual(expected);
      const root = (u: string) => u.replace('/jira', '');
      expect(urls({ host: 'example.com' })).toEqual({
        authorizationUrl: root(expected.authorizationUrl),
        tokenUrl: root(expected.tokenUrl),
        base: root(expected.base),
      });
      expect(urls({ host: 'example.com', contextPath: '' }).tokenUrl).toBe(root(expected.tokenUrl));
      // Only the host is a host key: the context path never widens what the host check allows.
      expect([...hostKeys(spec)]).toEqual(['host']);
      expect(templateHost(spec.tokenUrl!, new Set(['contextPath']))?.host).toBe('${connectionConfig.host}');
      for (const bad of ['/..', '//evil.example', '/jira/', '@evil.example', '/%2e%2e', '.evil.example'])
        expect([bad, code(() => checkConnectionConfig(spec, { host: 'example.com', contextPath: bad }))]).toEqual([
          bad,
          'invalid_connection_config',
        ]);
      expect(urlPathProblems(spec)).toEqual([]);
      expect(validateProvider(spec)).toEqual([]);
    });
  }

  it('an Integration without contextPath is configured, and its connections carry none', () => {
    const spec = catalogSpec('jira-data-center');
    expect(withIntegrationConfig(spec, { connectionConfig: { host: 'example.com' } }, {})).toEqual({ host: 'example.com' });
    expect(withIntegrationConfig(spec, { connectionConfig: { host: 'example.com', contextPath: '/jira' } }, {})).toEqual({
      host: 'example.com',
      contextPath: '/jira',
    });
    expect(code(() => withIntegrationConfig(spec, { connectionConfig: { host: 'example.com', contextPath: '/..' } }, {}))).toBe(
      'integration_not_configured',
    );
    expect(code(() => withIntegrationConfig(spec, { connectionConfig: { host: 'example.com' } }, { contextPath: '/other' }))).toBe(
      'invalid_connection_config',
    );
  });
});

describe('where a urlPath key may go (catalog rules)', () => {
  it('right after the host, or ending a path segment', () => {
    expect(urlPathProblems(provider('https://${connectionConfig.host}${connectionConfig.contextPath}/oauth/token'))).toEqual([]);
    expect(urlPathProblems(provider('https://${connectionConfig.host}/base${connectionConfig.contextPath}/token'))).toEqual([]);
    expect(urlPathProblems(provider('https://sso.example.com${connectionConfig.contextPath}/token', [CONTEXT]))).toEqual([]);
  });

  it('never in a host position: the catalog rules, the Provider check and the value check all refuse it', () => {
    for (const t of [
      'https://${connectionConfig.contextPath}.example.com/token',
      'https://${connectionConfig.host}${connectionConfig.contextPath}.example.com/token',
      'https://api.${connectionConfig.contextPath}${connectionConfig.host}/token',
      'https://${connectionConfig.contextPath}${connectionConfig.host}/token',
    ]) {
      const spec = provider(t);
      expect([t, urlPathProblems(spec)]).toEqual([t, expect.arrayContaining([expect.stringMatching(/is in the URL's host/)])]);
      expect(validateProvider(spec)).toEqual(expect.arrayContaining([expect.stringMatching(/contextPath.*host/)]));
      expect(hostKeys(spec).has('contextPath')).toBe(true);
      expect(code(() => checkConnectionConfig(spec, { host: 'example.com', contextPath: '/jira' }))).toBe('invalid_connection_config');
    }
  });

  it('never without a host, in a query or fragment, after a /, mid-segment, or beside another rule', () => {
    const cases: Array<[string, RegExp]> = [
      ['https://${connectionConfig.contextPath}/token', /has no host before it/],
      ['https://${connectionConfig.host}/token?next=${connectionConfig.contextPath}', /query or fragment/],
      ['https://${connectionConfig.host}/token#${connectionConfig.contextPath}', /query or fragment/],
      ['https://${connectionConfig.host}/${connectionConfig.contextPath}/token', /follows a "\/"/],
      ['https://${connectionConfig.host}${connectionConfig.contextPath}rest/token', /is in the URL's host/],
      ['https://${connectionConfig.host}/base${connectionConfig.contextPath}rest/token', /must be followed by/],
      ['/relative${connectionConfig.contextPath}/token', /not absolute/],
    ];
    for (const [t, why] of cases)
      expect([t, urlPathProblems(provider(t))]).toEqual([t, expect.arrayContaining([expect.stringMatching(why)])]);
    const both = provider('https://${connectionConfig.host}${connectionConfig.contextPath}/token', [HOST, { ...CONTEXT, pattern: '.*' }]);
    expect(urlPathProblems(both)).toEqual([expect.stringMatching(/urlPath and another rule/)]);
  });

  it('leaves the host check of an ordinary key as it was', () => {
    const spec = provider('https://${connectionConfig.host}${connectionConfig.contextPath}/token');
    expect(code(() => checkConnectionConfig(spec, { host: '127.0.0.1', contextPath: '/jira' }))).toBe('invalid_connection_config');
    expect(configFields(spec).find((f) => f.name === 'contextPath')?.required).toBe(false);
  });
});
