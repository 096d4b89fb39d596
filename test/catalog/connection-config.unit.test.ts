/**
 * Regions and self-hosting as connection configuration (src/catalog/connection-config.ts) on the shipped
 * manifests: the US or cloud host by default, each region the docs name, nothing else; self-hosted hosts
 * (Tableau Server, Looker) as public host names, never addresses; Canvas's hosts under instructure.com or the
 * operator's own suffixes.
 */
import { checkConnectionConfig, fillProviderUrl } from '../../src/catalog/connection-config.js';
import { LatchkeyError } from '../../src/domain/errors.js';
import type { ProviderSpec } from '../../src/k8s/resources.js';
import { catalogSpec } from '../support/catalog-files.js';

/** The provider's URLs for a connection configuration (defaults filled), or the error code. */
function urls(spec: ProviderSpec, config: Record<string, unknown>): Record<string, string> | string {
  try {
    const filled = checkConnectionConfig(spec, config);
    const out: Record<string, string> = {};
    for (const field of ['authorizationUrl', 'tokenUrl'] as const)
      if (spec[field]) out[field] = fillProviderUrl(spec, spec[field]!, filled);
    if (spec.twoStep?.tokenUrl) out.twoStep = fillProviderUrl(spec, String(spec.twoStep.tokenUrl), filled);
    out.base = fillProviderUrl(spec, spec.proxy!.baseUrl!, filled);
    return out;
  } catch (err) {
    if (err instanceof LatchkeyError) return err.code;
    throw err;
  }
}

describe('regions and self-hosting', () => {
  it('Clio: app.clio.com by default, the EU, CA and AU instances, nothing else', () => {
    const clio = catalogSpec('clio');
    expect(urls(clio, {})).toEqual({
      authorizationUrl: 'https://app.clio.com/oauth/authorize',
      tokenUrl: 'https://app.clio.com/oauth/token',
      base: 'https://app.clio.com',
    });
    for (const host of ['eu.app.clio.com', 'ca.app.clio.com', 'au.app.clio.com'])
      expect(urls(clio, { hostname: host })).toEqual({
        authorizationUrl: `https://${host}/oauth/authorize`,
        tokenUrl: `https://${host}/oauth/token`,
        base: `https://${host}`,
      });
    expect(urls(clio, { hostname: 'clio.evil.example' })).toBe('invalid_connection_config');
  });

  it('Smartsheet: smartsheet.com by default, Gov, Europe and Australia', () => {
    const smartsheet = catalogSpec('smartsheet');
    expect(urls(smartsheet, {})).toMatchObject({ tokenUrl: 'https://api.smartsheet.com/2.0/token', base: 'https://api.smartsheet.com' });
    expect(urls(smartsheet, { domain: 'smartsheet.eu' })).toEqual({
      authorizationUrl: 'https://app.smartsheet.eu/b/authorize',
      tokenUrl: 'https://api.smartsheet.eu/2.0/token',
      base: 'https://api.smartsheet.eu',
    });
    expect(urls(smartsheet, { domain: 'smartsheetgov.com' })).toMatchObject({ base: 'https://api.smartsheetgov.com' });
    expect(urls(smartsheet, { domain: 'smartsheet.au' })).toMatchObject({ base: 'https://api.smartsheet.au' });
    expect(urls(smartsheet, { domain: 'example.com' })).toBe('invalid_connection_config');
  });

  it('Zuora: rest.zuora.com by default, each environment host the docs list', () => {
    const zuora = catalogSpec('zuora');
    expect(urls(zuora, {})).toEqual({ tokenUrl: 'https://rest.zuora.com/oauth/token', base: 'https://rest.zuora.com' });
    expect(urls(zuora, { host: 'rest.eu.zuora.com' })).toEqual({
      tokenUrl: 'https://rest.eu.zuora.com/oauth/token',
      base: 'https://rest.eu.zuora.com',
    });
    expect(urls(zuora, { host: 'rest.ap.zuora.com' })).toMatchObject({ base: 'https://rest.ap.zuora.com' });
    expect(urls(zuora, { host: 'rest.zuora.com.evil.example' })).toBe('invalid_connection_config');
  });

  it("Typeform: the API on the account's data center; OAuth stays on api.typeform.com", () => {
    const typeform = catalogSpec('typeform');
    expect(urls(typeform, {})).toMatchObject({ base: 'https://api.typeform.com' });
    expect(urls(typeform, { apiHost: 'api.eu.typeform.com' })).toEqual({
      authorizationUrl: 'https://api.typeform.com/oauth/authorize',
      tokenUrl: 'https://api.typeform.com/oauth/token',
      base: 'https://api.eu.typeform.com',
    });
    expect(urls(typeform, { apiHost: 'api.typeform.eu' })).toMatchObject({ base: 'https://api.typeform.eu' });
    expect(urls(typeform, { apiHost: 'typeform.evil.example' })).toBe('invalid_connection_config');
  });

  it("Canvas: a host under instructure.com; an institution's own domain once the operator lists it", () => {
    const canvas = catalogSpec('canvas-lms');
    expect(urls(canvas, { hostname: 'acme.instructure.com' })).toEqual({
      authorizationUrl: 'https://acme.instructure.com/login/oauth2/auth',
      tokenUrl: 'https://acme.instructure.com/login/oauth2/token',
      base: 'https://acme.instructure.com',
    });
    expect(urls(canvas, { hostname: 'canvas.university.example' })).toBe('invalid_connection_config');
    const overlay: ProviderSpec = {
      ...canvas,
      connectionConfiguration: [{ name: 'hostname', hostSuffixes: ['instructure.com', 'canvas.university.example'], required: true }],
    };
    expect(urls(overlay, { hostname: 'canvas.university.example' })).toMatchObject({ base: 'https://canvas.university.example' });
  });

  it('Tableau Server and self-hosted Looker: any public host name, never an address; Tableau keeps its API version in the base', () => {
    const tableau = catalogSpec('tableau');
    expect(urls(tableau, { serverUrl: 'prod-useast-a.online.tableau.com' })).toEqual({
      twoStep: 'https://prod-useast-a.online.tableau.com/api/3.21/auth/signin',
      base: 'https://prod-useast-a.online.tableau.com/api/3.21',
    });
    expect(urls(tableau, { serverUrl: 'tableau.corp.example', version: '3.4' })).toEqual({
      twoStep: 'https://tableau.corp.example/api/3.4/auth/signin',
      base: 'https://tableau.corp.example/api/3.4',
    });
    expect(urls(tableau, { serverUrl: 'tableau.corp.example', version: '../x' })).toBe('invalid_connection_config');
    const looker = catalogSpec('looker');
    expect(urls(looker, { host: 'looker.corp.example' })).toEqual({
      twoStep: 'https://looker.corp.example/api/4.0/login',
      base: 'https://looker.corp.example/api',
    });
    for (const address of ['127.0.0.1', '10.0.0.1', '0x7f000001'])
      expect([address, urls(looker, { host: address })]).toEqual([address, 'invalid_connection_config']);
  });

  it('a template with an anyHost key refuses an address even where the value check is not run first', () => {
    const looker = catalogSpec('looker');
    expect(() => fillProviderUrl(looker, String(looker.twoStep!.tokenUrl), { host: '127.0.0.1' })).toThrow(LatchkeyError);
    expect(() => fillProviderUrl(looker, String(looker.twoStep!.tokenUrl), { host: '192.168.1.10' })).toThrow(LatchkeyError);
    expect(fillProviderUrl(looker, String(looker.twoStep!.tokenUrl), { host: 'looker.corp.example' })).toBe(
      'https://looker.corp.example/api/4.0/login',
    );
  });
});
