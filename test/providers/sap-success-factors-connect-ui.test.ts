/**
 * SAP SuccessFactors through the real Connect UI in Chromium (RFC 7522's SAML bearer grant; issue #57): the end user
 * sees the Integration's public certificate on the form (read-only, to copy or download, with SAP's help on where
 * their administrator registers it), types the API key, API server, company ID and user ID with each field's help
 * shown, connects, and a proxied OData call works. The provider is the doc-true simulator of
 * test/support/simulators/sap-success-factors.ts, whose xml-crypto check accepts only assertions that verify with
 * the certificate the form showed. The private key never reaches the page.
 */
import { readFileSync } from 'node:fs';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { applyProvider, createIntegration } from '../../dev/fixtures.js';
import { firstOutcome, openConnectPopup } from '../support/browser.js';
import { catalogSpec } from '../support/catalog-files.js';
import { startConnectBed, type ConnectBed } from '../support/connect-bed.js';
import { startSimulators, type SimulatorHost } from '../support/simulators/framework.js';
import { sapSuccessFactors, SF_HOST } from '../support/simulators/sap-success-factors.js';
import { makeRsaSigningCertificate } from '../support/test-ca.js';

const kc = testKubeConfig();
const SIGNER = makeRsaSigningCertificate('latchkey-sf-connect-ui');
// The administrator registers the certificate the form shows: the simulator verifies with it alone.
const sim = sapSuccessFactors({ certificate: SIGNER.cert });
const INTEGRATION = 'sap-success-factors';
let host: SimulatorHost;
let bed: ConnectBed;

beforeAll(async () => {
  host = await startSimulators([sim]);
  bed = await startConnectBed(kc, 'sf-ui', 'development', { egress: host.egressGuard(), browserArgs: host.chromiumArgs() });
  await applyProvider(kc, INTEGRATION, catalogSpec(INTEGRATION));
  await createIntegration(kc, bed.ns.name, INTEGRATION, { provider: INTEGRATION }, { privateKey: SIGNER.key, certificate: SIGNER.cert });
  await bed.synced(
    (store) => store.catalog.getProvider(INTEGRATION) && store.catalog.readSecretValue(bed.ns.name, `${INTEGRATION}-client`, 'certificate'),
  );
}, 300_000);

afterAll(async () => {
  await bed?.close();
  await host?.close();
});

async function latchkeyApi(method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) {
  const res = await fetch(`${bed.latchkey.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${bed.env.secretKey}`, ...init.headers },
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
  const text = await res.text();
  return { status: res.status, text, body: text.startsWith('{') ? (JSON.parse(text) as any) : undefined };
}

async function sessionToken(endUser: string): Promise<string> {
  const body = JSON.stringify({ end_user: { id: endUser }, allowed_integrations: [INTEGRATION] });
  const res = await latchkeyApi('POST', '/connect/sessions', { headers: { 'content-type': 'application/json' }, body });
  expect(res.status).toBe(201);
  return res.body.data.token as string;
}

const keyLines = (pem: string) => pem.split('\n').filter((l) => l && !l.startsWith('-----'));

describe('sap-success-factors in the Connect UI (Chromium)', () => {
  it('shows the certificate to register, takes the typed values with their help, connects, and proxies an OData call', async () => {
    const context = await bed.browser.newContext({ acceptDownloads: true });
    try {
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: bed.latchkey.url });
      const { app, popup } = await openConnectPopup(context, bed.app.url, await sessionToken('sf-ui-user'));
      await popup.waitForSelector('textarea#certificate');

      // The certificate, read-only, exactly the Integration's; SAP's help on where it is registered; no key text anywhere.
      const certificate = popup.locator('textarea#certificate');
      expect((await certificate.inputValue()).trim()).toBe(SIGNER.cert.trim());
      expect(await certificate.getAttribute('readonly')).not.toBeNull();
      const page = await popup.innerText('body');
      expect(page).toContain('Certificate to register');
      expect(page).toContain('Give it to your SAP SuccessFactors administrator');
      expect(page).toContain('Manage OAuth2 Client Applications');
      expect(await popup.getAttribute('#certificate-help a.docs', 'href')).toBe(
        'https://apps.support.sap.com/sap/support/knowledge/en/2850646',
      );
      const html = await popup.content();
      expect(html).not.toContain('PRIVATE KEY');
      for (const line of keyLines(SIGNER.key)) expect(html).not.toContain(line);

      // Download: a file of the certificate alone.
      const [download] = await Promise.all([popup.waitForEvent('download'), popup.click('#certificate-download')]);
      expect(download.suggestedFilename()).toBe(`${INTEGRATION}.crt`);
      expect(readFileSync((await download.path())!, 'utf8').trim()).toBe(SIGNER.cert.trim());
      // Copy: the clipboard holds it, and the page says so.
      await popup.click('#certificate-copy');
      await popup.waitForSelector('text=Copied');
      expect((await popup.evaluate(() => navigator.clipboard.readText())).trim()).toBe(SIGNER.cert.trim());

      // Each typed field's help (the manifest's fieldHelp), then the values the administrator's registration gave.
      const helpOf = (name: string, group: 'values' | 'config') => popup.innerText(`#f-${group}-${name}-help`);
      expect(await helpOf('clientId', 'values')).toContain('copy its API Key');
      expect(await helpOf('apiServer', 'config')).toContain('It is not your login host');
      expect(await helpOf('companyId', 'config')).toContain('company_id');
      expect(await helpOf('userId', 'config')).toContain('Manage Login Accounts');
      expect(await popup.getAttribute('input[name="apiServer"]', 'placeholder')).toContain(SF_HOST);
      await popup.fill('input[name="clientId"]', sim.registered.apiKey);
      await popup.fill('input[name="apiServer"]', SF_HOST);
      await popup.fill('input[name="companyId"]', sim.registered.companyId);
      await popup.fill('input[name="userId"]', sim.registered.userId);
      await popup.click('button[type=submit]');
      const event = await firstOutcome(app);
      const text = event.type === 'error' ? await popup.innerText('body').catch(() => '') : '';
      expect({ ...event, text }).toMatchObject({ type: 'connect', providerConfigKey: INTEGRATION, text: '' });

      const connectionId = event.connectionId!;
      await eventually(() => bed.latchkey.ctx.connections.getConnection(bed.ns.name, INTEGRATION, connectionId));
      // The assertion that got the token verified with the certificate the form showed.
      expect(sim.assertions.at(-1)).toContain(`>${sim.registered.userId}</saml2:NameID>`);
      const proxied = await latchkeyApi('GET', '/proxy/odata/v2/User', {
        headers: { 'connection-id': connectionId, 'provider-config-key': INTEGRATION },
      });
      expect({ status: proxied.status, body: proxied.body }).toEqual({
        status: 200,
        body: { d: { results: [{ userId: 'sfadmin', username: 'sfadmin' }] } },
      });
      const apiCall = sim.state.requests.filter((q) => q.path === '/odata/v2/User').at(-1)!;
      expect(apiCall.headers.authorization).toBe(`Bearer ${sim.state.accessTokens.at(-1)}`);
    } finally {
      await context.close();
    }
  });

  it("words the certificate's parts in the end user's language (the browser's, French here)", async () => {
    const context = await bed.browser.newContext({ locale: 'fr-FR' });
    try {
      const { popup } = await openConnectPopup(context, bed.app.url, await sessionToken('sf-ui-fr'));
      await popup.waitForSelector('textarea#certificate');
      expect(await popup.innerText('label[for=certificate]')).toBe('Certificat à enregistrer');
      expect(await popup.innerText('#certificate-help')).toContain('Transmettez-le à votre administrateur SAP SuccessFactors');
      expect(await popup.innerText('#certificate-copy')).toBe('Copier');
      expect(await popup.innerText('#certificate-download')).toBe('Télécharger');
    } finally {
      await context.close();
    }
  });
});
