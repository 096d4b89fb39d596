/**
 * Each mode's Provider options (src/modes/<mode>/options.ts): one block per mode, checked by the mode's
 * schema when the Provider is reconciled and shown by GET /providers through the registry. Every shipped
 * provider's block passes its mode's schema, so the reconciler reports nothing new for the catalog.
 */
import { AUTH_MODES } from '../../src/domain/auth-modes.js';
import type { ProviderSpec } from '../../src/k8s/resources.js';
import { AUTH_MODE_MODULES, modeOptionsViewSchemas, providerModeProblems, shownModeOptions } from '../../src/modes/registry.js';
import { readCatalog } from '../support/catalog-files.js';

describe('mode options', () => {
  it("passes every shipped provider's options block through its mode's schema", () => {
    const catalog = readCatalog();
    expect(catalog.length).toBeGreaterThan(1000);
    const failing = catalog.flatMap(({ metadata, spec }) => {
      const options = AUTH_MODE_MODULES[spec.authMode].options;
      const block = options && spec[options.field];
      if (!options || block === undefined) return [];
      const parsed = options.schema.safeParse(block);
      return parsed.success ? [] : [`${metadata.name}: ${parsed.error.issues[0]?.message}`];
    });
    expect(failing).toEqual([]);
    const checked = catalog.filter(({ spec }) => {
      const options = AUTH_MODE_MODULES[spec.authMode].options;
      return options && spec[options.field] !== undefined;
    });
    // JWT's and OAUTH2_CC's modeOptions (SuccessFactors' samlBearer), BASIC's basic, TWO_STEP's twoStep, APP_STORE, TBA,
    // SIGNATURE, APP, CUSTOM and MCP_OAUTH2 (mcp) ship a block.
    expect(new Set(checked.map(({ spec }) => spec.authMode))).toEqual(
      new Set(['BASIC', 'JWT', 'OAUTH2_CC', 'TWO_STEP', 'APP_STORE', 'TBA', 'SIGNATURE', 'APP', 'CUSTOM', 'MCP_OAUTH2']),
    );
    for (const { spec } of catalog) expect(providerModeProblems(spec)).toEqual(AUTH_MODE_MODULES[spec.authMode].providerProblems(spec));
  });

  it('reports a block its mode cannot use, once the mode has nothing else to report', () => {
    const tba: ProviderSpec = {
      displayName: 'NetSuite',
      authMode: 'TBA',
      connectionConfiguration: [{ name: 'accountId' }],
      tba: { signatureMethod: 'MD5' as never },
    };
    expect(providerModeProblems(tba)).toEqual([expect.stringMatching(/^spec\.tba is not usable \(signatureMethod: /)]);
    const jwt: ProviderSpec = { displayName: 'Ghost', authMode: 'JWT', modeOptions: { algorithm: 'HS256', lifetimeSeconds: -5 } };
    expect(providerModeProblems(jwt)).toEqual([expect.stringMatching(/^spec\.modeOptions is not usable \(lifetimeSeconds: /)]);
    // OAUTH2_CC's SAML bearer grant: an assertion accepted for more than an hour, or a block missing its audience.
    const saml = { issuer: 'i', audience: 'a', recipient: 'https://h/oauth/token', nameId: '${connectionConfig.userId}' };
    const cc: ProviderSpec = {
      displayName: 'SF',
      authMode: 'OAUTH2_CC',
      tokenUrl: 'https://h/oauth/token',
      modeOptions: { samlBearer: saml },
    };
    expect(providerModeProblems(cc)).toEqual([]);
    expect(providerModeProblems({ ...cc, modeOptions: { samlBearer: { ...saml, lifetimeSeconds: 86400 } } })).toEqual([
      expect.stringMatching(/^spec\.modeOptions is not usable \(samlBearer\.lifetimeSeconds: /),
    ]);
    expect(providerModeProblems({ ...cc, modeOptions: { samlBearer: { ...saml, audience: undefined } } })).toEqual([
      expect.stringMatching(/^spec\.modeOptions is not usable \(samlBearer\.audience: /),
    ]);
    // The module's own verdict first: one message, not two, for a JWT provider without an algorithm.
    expect(providerModeProblems({ ...jwt, modeOptions: {} })).toEqual([
      'JWT providers need spec.modeOptions.algorithm (for example ES256 or HS256)',
    ]);
  });

  it("shows the mode's own block only, under the name its module gives", () => {
    const spec: ProviderSpec = { displayName: 'Sig', authMode: 'SIGNATURE', signature: { protocol: 'WSSE', lifetimeSeconds: 60 } };
    expect(shownModeOptions(spec)).toEqual({ signature: { protocol: 'WSSE', lifetime_seconds: 60 } });
    expect(shownModeOptions({ displayName: 'O', authMode: 'OAUTH2' })).toEqual({});
    expect(shownModeOptions({ displayName: 'J', authMode: 'JWT', modeOptions: { algorithm: 'HS256' } })).toEqual({
      mode_options: { algorithm: 'HS256' },
    });
  });

  it('gives the REST schema one block per options field, APP and CUSTOM sharing theirs', () => {
    const withOptions = AUTH_MODES.filter((m) => AUTH_MODE_MODULES[m].options);
    expect(withOptions.sort()).toEqual([
      'APP',
      'APP_STORE',
      'BASIC',
      'CUSTOM',
      'INSTALL_PLUGIN',
      'JWT',
      'MCP_OAUTH2',
      'OAUTH2_CC',
      'SIGNATURE',
      'TBA',
      'TWO_STEP',
    ]);
    expect(AUTH_MODE_MODULES.APP.options).toBe(AUTH_MODE_MODULES.CUSTOM.options);
    expect(Object.keys(modeOptionsViewSchemas()).sort()).toEqual([
      'app_installation',
      'app_store',
      'basic',
      'mcp',
      'mode_options',
      'plugin_install',
      'signature',
      'tba',
      'two_step',
    ]);
  });
});
