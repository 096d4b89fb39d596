/**
 * Connection configuration the Integration sets (`setBy: integration`, src/catalog/integration-config.ts): any host
 * is allowed where the client secret follows it only on such a key; the Integration's value fills every
 * connection, a caller's other value is refused, and a missing one is the Integration's state (409).
 */
import {
  anyHostProblems,
  checkIntegrationConfigInput,
  integrationConfigProblems,
  withIntegrationConfig,
} from '../../src/catalog/integration-config.js';
import { checkConnectionConfig, fillProviderUrl } from '../../src/catalog/connection-config.js';
import { validateProvider } from '../../src/controller/reconcilers/provider.js';
import { LatchkeyError } from '../../src/domain/errors.js';
import type { ProviderSpec } from '../../src/k8s/resources.js';
import { catalogSpec } from '../support/catalog-files.js';

const oauth2 = (host: Record<string, unknown>): ProviderSpec => ({
  displayName: 'Self-managed',
  authMode: 'OAUTH2',
  authorizationUrl: 'https://${connectionConfig.host}/oauth/authorize',
  tokenUrl: 'https://${connectionConfig.host}/oauth/token',
  connectionConfiguration: [{ name: 'host', required: true, ...host }],
  proxy: { baseUrl: 'https://${connectionConfig.host}' },
});

function refusal(fn: () => unknown): { kind: string; code: string; message: string; errors?: unknown } | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (!(err instanceof LatchkeyError)) throw err;
    return { kind: err.kind, code: err.code, message: err.message, ...(err.errors ? { errors: err.errors } : {}) };
  }
}

describe('anyHost where the client secret follows', () => {
  it('is refused on a key the end user or a caller sets, in OAUTH2 (the Provider is not Ready)', () => {
    expect(anyHostProblems(oauth2({ anyHost: true }))).toEqual([
      expect.stringContaining('spec.connectionConfiguration "host" has anyHost in OAUTH2'),
    ]);
    expect(validateProvider(oauth2({ anyHost: true }))).toEqual([expect.stringContaining('setBy: integration')]);
  });

  it('is allowed on a key the Integration sets, and in modes that send no integration secret', () => {
    expect(anyHostProblems(oauth2({ anyHost: true, setBy: 'integration' }))).toEqual([]);
    expect(validateProvider(oauth2({ anyHost: true, setBy: 'integration' }))).toEqual([]);
    expect(anyHostProblems({ ...oauth2({ anyHost: true }), authMode: 'API_KEY' })).toEqual([]);
  });
});

describe("the Integration's values (jira-data-center)", () => {
  const jira = catalogSpec('jira-data-center');
  const integration = { connectionConfig: { host: 'jira.example.com' } };

  it('fill the connection, whose URLs then go to the Integration’s host', () => {
    const config = checkConnectionConfig(jira, withIntegrationConfig(jira, integration, {}));
    expect(config).toEqual({ host: 'jira.example.com' });
    expect(fillProviderUrl(jira, jira.tokenUrl!, config)).toBe('https://jira.example.com/rest/oauth2/latest/token');
    expect(fillProviderUrl(jira, jira.authorizationUrl!, config)).toBe('https://jira.example.com/rest/oauth2/latest/authorize');
    expect(fillProviderUrl(jira, jira.proxy!.baseUrl!, config)).toBe('https://jira.example.com/rest/api/latest');
    // The same value sent again is fine (an import that repeats it).
    expect(withIntegrationConfig(jira, integration, { host: ' jira.example.com ' })).toEqual({ host: 'jira.example.com' });
  });

  it("refuse a caller's other host with a 400 naming the key, never the value", () => {
    const r = refusal(() => withIntegrationConfig(jira, integration, { host: 'attacker.example' }, 'connection_config'));
    expect(r).toMatchObject({
      kind: 'invalid_input',
      code: 'invalid_connection_config',
      errors: [{ path: 'connection_config.host', message: expect.stringContaining('set by the integration') }],
    });
    expect(JSON.stringify(r)).not.toContain('attacker.example');
  });

  it('missing or invalid on the Integration: 409 integration_not_configured, and the problems the Ready condition names', () => {
    expect(refusal(() => withIntegrationConfig(jira, {}, {}))).toMatchObject({ kind: 'conflict', code: 'integration_not_configured' });
    // A caller cannot fill the gap either.
    expect(refusal(() => withIntegrationConfig(jira, {}, { host: 'jira.example.com' }))).toMatchObject({
      code: 'integration_not_configured',
    });
    expect(integrationConfigProblems(jira, {})).toEqual([
      { key: 'host', kind: 'missing', message: expect.stringContaining('spec.connectionConfig.host is required') },
    ]);
    for (const host of ['10.0.0.7', 'localhost', 'jira.example.com:8443', 'https://jira.example.com']) {
      expect(integrationConfigProblems(jira, { connectionConfig: { host } })).toEqual([
        { key: 'host', kind: 'invalid', message: 'spec.connectionConfig.host: "host" must be a host name' },
      ]);
      expect(refusal(() => withIntegrationConfig(jira, { connectionConfig: { host } }, {}))).toMatchObject({
        code: 'integration_not_configured',
      });
    }
    expect(integrationConfigProblems(jira, { connectionConfig: { host: 'jira.example.com', team: 'x' } })).toEqual([
      { key: 'team', kind: 'unknown', message: 'spec.connectionConfig.team is not a key this Provider lets the Integration set' },
    ]);
  });

  it("Confluence Data Center: the same endpoints on the Integration's Confluence server", () => {
    const confluence = catalogSpec('confluence-data-center');
    const config = checkConnectionConfig(
      confluence,
      withIntegrationConfig(confluence, { connectionConfig: { host: 'wiki.example.com' } }, {}),
    );
    expect(fillProviderUrl(confluence, confluence.authorizationUrl!, config)).toBe('https://wiki.example.com/rest/oauth2/latest/authorize');
    expect(fillProviderUrl(confluence, confluence.tokenUrl!, config)).toBe('https://wiki.example.com/rest/oauth2/latest/token');
    expect(fillProviderUrl(confluence, confluence.proxy!.baseUrl!, config)).toBe('https://wiki.example.com');
    expect(confluence.defaultScopes).toEqual(['READ']);
  });

  it('leave Providers without such keys as they were', () => {
    const basic = catalogSpec('jira-data-center-basic');
    expect(withIntegrationConfig(basic, integration, { host: 'jira.other.example' })).toEqual({ host: 'jira.other.example' });
    expect(integrationConfigProblems(basic, {})).toEqual([]);
  });
});

describe("the integrations API's connection_config", () => {
  const jira = catalogSpec('jira-data-center');

  it("accepts the Provider's setBy: integration keys with values their rule allows", () => {
    expect(refusal(() => checkIntegrationConfigInput(jira, { host: 'jira.example.com' }))).toBeUndefined();
    expect(refusal(() => checkIntegrationConfigInput(jira, {}))).toBeUndefined();
  });

  it('refuses another key or a refused value, naming every key and never a value', () => {
    const refused = refusal(() => checkIntegrationConfigInput(jira, { host: '192.168.1.10', team: 'platform' }));
    expect(refused).toMatchObject({
      kind: 'invalid_input',
      code: 'invalid_connection_config',
      errors: [
        { path: 'connection_config.host', message: '"host" must be a host name' },
        {
          path: 'connection_config.team',
          message: '"team" is not a key this provider lets the integration set (those are "host", "contextPath")',
        },
      ],
    });
    expect(JSON.stringify(refused)).not.toMatch(/192\.168|platform"/);
    // A key the end user types (Basic auth's host) is not the Integration's to set.
    expect(refusal(() => checkIntegrationConfigInput(catalogSpec('jira-data-center-basic'), { host: 'jira.example.com' }))).toMatchObject({
      errors: [{ message: '"host" is not a key this provider lets the integration set (it has none)' }],
    });
  });
});
