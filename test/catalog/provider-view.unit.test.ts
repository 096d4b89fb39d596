/**
 * The Provider record as GET /providers and /providers/{name} show it (src/integrations/provider-view.ts):
 * each auth mode's own block in snake_case, the TWO_STEP request templates never shown, and every
 * shipped catalog provider shown with every field it sets, in a shape the REST schema documents.
 */
import { cachedProviderView, providerMatches, providerView } from '../../src/integrations/provider-view.js';
import { Provider } from '../../src/http/rest/schemas/providers.js';
import type { ProviderResource, ProviderSpec } from '../../src/k8s/resources.js';
import { readCatalog } from '../support/catalog-files.js';

const resource = (spec: Partial<ProviderSpec> & Pick<ProviderSpec, 'authMode'>): ProviderResource => ({
  metadata: { name: `p-${spec.authMode.toLowerCase()}` },
  spec: { displayName: 'Example', ...spec },
});

const BASE = 'https://latchkey.example.com/base';
const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

describe('provider view', () => {
  it.each([
    {
      mode: 'APP_STORE' as const,
      spec: { appStore: { lifetimeSeconds: 900 } },
      shown: { app_store: { lifetime_seconds: 900 } },
    },
    {
      mode: 'TBA' as const,
      spec: { tba: { accountIdKey: 'realm', signatureMethod: 'HMAC-SHA1' as const } },
      shown: { tba: { account_id_key: 'realm', signature_method: 'HMAC-SHA1' } },
    },
    {
      mode: 'SIGNATURE' as const,
      spec: { signature: { protocol: 'WSSE' as const, lifetimeSeconds: 120, header: 'x-wsse' } },
      shown: { signature: { protocol: 'WSSE', lifetime_seconds: 120, header: 'x-wsse' } },
    },
    {
      mode: 'APP' as const,
      spec: { appInstallation: { installationUrl: 'https://api.example.test/app/installations/${connectionConfig.installationId}' } },
      shown: { app_installation: { installation_url: 'https://api.example.test/app/installations/${connectionConfig.installationId}' } },
    },
    {
      mode: 'CUSTOM' as const,
      spec: {
        appInstallation: {
          userTokenUrl: 'https://example.test/login/oauth/access_token',
          userInstallationsUrl: 'https://api.example.test/user/installations',
        },
      },
      shown: {
        app_installation: {
          user_token_url: 'https://example.test/login/oauth/access_token',
          user_installations_url: 'https://api.example.test/user/installations',
        },
      },
    },
    {
      mode: 'INSTALL_PLUGIN' as const,
      spec: {
        pluginInstall: {
          installUrl: 'https://${connectionConfig.shop}.example.test/plugins/install',
          credentialParam: 'api_key',
          configParams: ['account_id'],
          signatureParam: 'hmac',
          timestampParam: 'ts',
          maxAgeSeconds: 600,
        },
      },
      shown: {
        plugin_install: {
          install_url: 'https://${connectionConfig.shop}.example.test/plugins/install',
          credential_param: 'api_key',
          config_params: ['account_id'],
          signature_param: 'hmac',
          timestamp_param: 'ts',
          max_age_seconds: 600,
        },
      },
    },
    {
      mode: 'API_KEY' as const,
      spec: {
        proxy: { baseUrl: 'https://api.example.test', headers: { authorization: 'Bearer ${apiKey}' } },
        verification: { docs: 'https://docs.example.test/me', path: '/v1/me', headers: { 'x-version': '2' } },
      },
      shown: { verification: { docs: 'https://docs.example.test/me', method: 'GET', path: '/v1/me', headers: { 'x-version': '2' } } },
    },
    {
      mode: 'API_KEY' as const,
      spec: {
        proxy: { baseUrl: 'https://mandrillapp.com/api', body: { key: '${apiKey}' } },
        verification: { method: 'POST' as const, path: '/1.0/users/ping.json' },
      },
      shown: {
        proxy: { base_url: 'https://mandrillapp.com/api', decompress: false, body: { key: '${apiKey}' } },
        verification: { method: 'POST', path: '/1.0/users/ping.json' },
      },
    },
    {
      mode: 'OAUTH2' as const,
      spec: {
        revocation: {
          url: 'https://api.example.test/apps/${clientId}/grant',
          method: 'DELETE' as const,
          tokenIn: 'json' as const,
          tokenField: 'access_token',
          clientAuth: 'basic' as const,
        },
      },
      shown: {
        revocation: {
          url: 'https://api.example.test/apps/${clientId}/grant',
          method: 'DELETE',
          token_in: 'json',
          token_field: 'access_token',
          client_auth: 'basic',
        },
      },
    },
  ])("shows $mode's own block in snake_case", ({ mode, spec, shown }) => {
    const view = providerView(resource({ authMode: mode, ...spec }), BASE);
    expect(view).toMatchObject({ auth_mode: mode, ...shown });
    expect(Provider.strict().safeParse(view).success).toBe(true);
  });

  it('shows TWO_STEP fields with their defaults and where they are exchanged, never the request templates', () => {
    const view = providerView(
      resource({
        authMode: 'TWO_STEP',
        twoStep: {
          tokenUrl: 'https://${connectionConfig.host}/api/login',
          contentType: 'form',
          headers: { 'x-app-key': 'fixed-app-key-in-header' },
          body: { user: '${credentials.username}', app_secret: 'fixed-app-secret-in-body' },
          credentialFields: [{ name: 'username', label: 'User', secret: false }, { name: 'password' }, { name: 'otp', required: false }],
          tokenPath: '/data/token',
          expiresInPath: 'data.expires_in',
          defaultLifetimeSeconds: 3600,
        },
      }),
      BASE,
    );
    expect(view.two_step).toEqual({
      token_url: 'https://${connectionConfig.host}/api/login',
      content_type: 'form',
      credential_fields: [
        { name: 'username', label: 'User', secret: false, required: true },
        { name: 'password', secret: true, required: true },
        { name: 'otp', secret: true, required: false },
      ],
      token_path: '/data/token',
      expires_in_path: 'data.expires_in',
      default_lifetime_seconds: 3600,
    });
    expect(JSON.stringify(view)).not.toMatch(/fixed-app-|x-app-key|credentials\.username/);
    expect(Provider.strict().safeParse(view).success).toBe(true);
  });

  it('names the post-connection steps as post_connection_script, and shows them and the token answer shapes as declared', () => {
    const postConnection = {
      name: 'atlassian-accessible-resources',
      steps: [{ name: 'sites', url: 'https://api.atlassian.com/oauth/token/accessible-resources', items: '', several: 'refuse' as const }],
    };
    const tokenResponse = { errorWhen: { path: 'ok', equals: false }, tokenPath: 'authed_user' };
    const view = providerView(
      resource({
        authMode: 'OAUTH2',
        authorizationUrl: 'https://a.example.com/authorize',
        tokenUrl: 'https://a.example.com/token',
        postConnection,
        tokenResponse,
      }),
      BASE,
    );
    expect(view).toMatchObject({
      post_connection_script: 'atlassian-accessible-resources',
      post_connection: postConnection,
      token_response: tokenResponse,
    });
    expect(Provider.strict().safeParse(view).success).toBe(true);
  });

  it("names the webhook routing as webhook_routing_script for every shipped provider with a webhooks block; the steps' documentedUrl is not shown", () => {
    const catalog = readCatalog();
    const withWebhooks = catalog.filter((m) => m.spec.webhooks);
    expect(withWebhooks.length).toBeGreaterThanOrEqual(17);
    const unnamed = withWebhooks
      .map((m) => [m.metadata.name, providerView({ metadata: { name: m.metadata.name }, spec: m.spec }, BASE).webhook_routing_script])
      .filter(([, script]) => typeof script !== 'string' || script === '');
    expect(unnamed).toEqual([]);
    const slack = catalog.find((m) => m.metadata.name === 'slack')!;
    expect(providerView({ metadata: { name: 'slack' }, spec: slack.spec }, BASE).webhook_routing_script).toBe('slackWebhookRouting');
    // Without a webhooks block: no routing to name.
    expect(providerView(resource({ authMode: 'API_KEY' }), BASE)).not.toHaveProperty('webhook_routing_script');

    const hubspot = catalog.find((m) => m.metadata.name === 'hubspot')!;
    expect(hubspot.spec.postConnection!.steps[0]!.documentedUrl).toBeDefined();
    const shown = providerView({ metadata: { name: 'hubspot' }, spec: hubspot.spec }, BASE).post_connection as { steps: object[] };
    expect(shown.steps[0]).toEqual({ name: 'account', url: '/account-info/v3/details' });
  });

  it('shows aliases (none when the list is empty), and a search matches an alias', () => {
    const withAliases = resource({ authMode: 'API_KEY', aliases: ['old-name', 'other-name'] });
    expect(providerView(withAliases, BASE).aliases).toEqual(['old-name', 'other-name']);
    expect(providerView(resource({ authMode: 'API_KEY', aliases: [] }), BASE)).not.toHaveProperty('aliases');
    expect(providerMatches(withAliases, 'other-na')).toBe(true);
    expect(providerMatches(withAliases, 'unrelated')).toBe(false);
  });

  it('builds a view once per Provider object and again for a changed one (the informer replaces the object)', () => {
    const first = resource({ authMode: 'API_KEY', categories: ['crm'] });
    const view = cachedProviderView(first, BASE);
    expect(view).toEqual(providerView(first, BASE));
    expect(cachedProviderView(first, BASE)).toBe(view);
    const changed = { ...first, spec: { ...first.spec, categories: ['support'] } };
    expect(cachedProviderView(changed, BASE).categories).toEqual(['support']);
    expect(cachedProviderView(first, 'https://other.example.com').logo_url).toBe(providerView(first, 'https://other.example.com').logo_url);
  });

  it('leaves out the blocks a provider does not set', () => {
    const view = providerView(resource({ authMode: 'API_KEY', proxy: { headers: { authorization: 'Bearer ${apiKey}' } } }), BASE);
    for (const key of [
      'two_step',
      'app_store',
      'tba',
      'signature',
      'app_installation',
      'plugin_install',
      'logo_url',
      'verification',
      'revocation',
    ])
      expect(view).not.toHaveProperty(key);
  });

  it('shows every field each shipped provider sets, in the shape the REST schema documents', () => {
    const catalog = readCatalog();
    const modes = new Set(catalog.map((m) => m.spec.authMode));
    // The catalog has providers of the modes with their own blocks (INSTALL_PLUGIN has none shipped yet).
    for (const mode of ['TWO_STEP', 'APP_STORE', 'TBA', 'SIGNATURE', 'APP', 'CUSTOM']) expect(modes).toContain(mode);
    const problems: string[] = [];
    for (const m of catalog) {
      const view = providerView({ metadata: { name: m.metadata.name }, spec: m.spec }, BASE);
      const parsed = Provider.strict().safeParse(view);
      if (!parsed.success)
        problems.push(`${m.metadata.name}: ${parsed.error.issues[0]?.path.join('.')} ${parsed.error.issues[0]?.message}`);
      for (const key of Object.keys(m.spec)) {
        if (!(snake(key) in view)) problems.push(`${m.metadata.name}: spec.${key} is not shown`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('points logo_url at the shipped logo Latchkey serves, unless the Provider has its own; none for a provider without one', () => {
    const github = { metadata: { name: 'github' }, spec: { displayName: 'GitHub', authMode: 'OAUTH2' as const } };
    expect(providerView(github, BASE).logo_url).toBe(`${BASE}/connect/logos/github.svg`);
    expect(providerView(github, `${BASE}/`).logo_url).toBe(`${BASE}/connect/logos/github.svg`);
    const own = { ...github, spec: { ...github.spec, logoUrl: 'https://cdn.example.com/gh.png' } };
    expect(providerView(own, BASE).logo_url).toBe('https://cdn.example.com/gh.png');
    // simple-icons has no OpenAI icon: no logo, the UI shows the initial.
    expect(providerView({ metadata: { name: 'openai' }, spec: { displayName: 'OpenAI', authMode: 'API_KEY' } }, BASE)).not.toHaveProperty(
      'logo_url',
    );
  });

  it('shows field help in snake_case', () => {
    const view = providerView(
      resource({
        authMode: 'API_KEY',
        fieldHelp: { apiKey: { description: 'Your key', example: 'sk-…', docsUrl: 'https://example.com/keys', labels: { fr: 'Clé' } } },
      }),
      BASE,
    );
    expect(view.field_help).toEqual({
      apiKey: { description: 'Your key', example: 'sk-…', docs_url: 'https://example.com/keys', labels: { fr: 'Clé' } },
    });
    expect(Provider.strict().safeParse(view).success).toBe(true);
  });

  it("shows a SAML bearer Provider's help on where the Integration's certificate is registered (SuccessFactors)", () => {
    const sf = readCatalog().find((m) => m.metadata.name === 'sap-success-factors')!;
    const view = providerView({ metadata: { name: sf.metadata.name }, spec: sf.spec }, BASE);
    expect(view.field_help?.certificate).toMatchObject({
      description: expect.stringContaining('Manage OAuth2 Client Applications'),
      docs_url: 'https://apps.support.sap.com/sap/support/knowledge/en/2850646',
    });
    expect(Provider.strict().safeParse(view).success).toBe(true);
  });
});
