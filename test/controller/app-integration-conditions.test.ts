/**
 * The reconcilers' verdicts on code-host app integrations against a real control plane: a CUSTOM
 * Integration (GitHub App with user authorization) is Ready only with the app's keys, its link and
 * its OAuth client, each missing key named in the condition (the OAuth client's keys never stand in
 * for the app's); a CUSTOM Provider's URL templates are checked like every other URL, with the
 * connection configuration declared in its object form.
 */
import { generateKeyPairSync } from 'node:crypto';
import { CoreV1Api } from '@kubernetes/client-node';
import { testKubeConfig } from '../../dev/cluster.js';
import { createIntegration } from '../../dev/fixtures.js';
import { startControllerBed, type ControllerBed } from '../support/controller-bed.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const ORIGIN = 'https://github.example.test';
let bed: ControllerBed;
let ns: ControllerBed['ns'];

const privateKeyPem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const APP_KEYS = { appId: '4242', privateKey: privateKeyPem, appLink: `${ORIGIN}/apps/latchkey-test` };
const OAUTH_CLIENT = { clientId: 'Iv1.0123456789abcdef', clientSecret: 'custom-client-secret-value' };

/** The shipped github-app-oauth Provider's shape, against a made-up origin. */
function customSpec(userTokenUrl = `${ORIGIN}/login/oauth/access_token`) {
  return {
    displayName: 'GitHub App OAuth',
    authMode: 'CUSTOM' as const,
    authorizationUrl: `${ORIGIN}/apps/\${connectionConfig.appSlug}/installations/new`,
    tokenUrl: `${ORIGIN}/app/installations/\${connectionConfig.installationId}/access_tokens`,
    connectionConfiguration: [
      { name: 'appSlug', pattern: '[A-Za-z0-9][A-Za-z0-9._~-]{0,254}', required: true },
      { name: 'installationId', pattern: '[0-9]{1,20}', required: true },
    ],
    appInstallation: { userTokenUrl, userInstallationsUrl: `${ORIGIN}/user/installations` },
  };
}

beforeAll(async () => {
  bed = await startControllerBed(kc, 'app-conditions');
  ({ ns } = bed);
});

afterAll(async () => {
  await bed?.close();
});

const provider = (suffix: string, spec: Parameters<ControllerBed['provider']>[1]) => bed.provider(suffix, spec);
const integrationReady = async (name: string, reason: string) => (await bed.readyOf('integrations', name, reason)).ready;

const providerReady = (name: string, reason?: string) => bed.providerReady(name, reason);

describe('CUSTOM integrations', () => {
  it("is not Ready while its Secret lacks the OAuth client's secret, and is once it is added", async () => {
    const p = await provider('custom-ok', customSpec());
    expect(await providerReady(p)).toMatchObject({ status: 'True', reason: 'Valid' });
    await createIntegration(kc, ns.name, 'no-client-secret', { provider: p }, { ...APP_KEYS, clientId: OAUTH_CLIENT.clientId });
    const missing = await integrationReady('no-client-secret', 'SecretKeyMissing');
    expect(missing.status).toBe('False');
    expect(missing.message).toMatch(/lacks "clientSecret": CUSTOM integrations need/);

    await core.patchNamespacedSecret({
      namespace: ns.name,
      name: 'no-client-secret-client',
      body: [{ op: 'add', path: '/data/clientSecret', value: Buffer.from(OAUTH_CLIENT.clientSecret).toString('base64') }],
    });
    const ready = await integrationReady('no-client-secret', 'Ready');
    expect(ready.status).toBe('True');
  });

  it("names the app's keys when only the OAuth client is there (its keys are not read as the app's)", async () => {
    const p = await provider('custom-client-only', customSpec());
    await createIntegration(kc, ns.name, 'client-only', { provider: p }, OAUTH_CLIENT);
    const ready = await integrationReady('client-only', 'SecretKeyMissing');
    expect(ready.message).toContain('lacks "appId" and "privateKey" and "appLink"');
    for (const value of Object.values(OAUTH_CLIENT)) expect(ready.message).not.toContain(value);
  });

  it('tells a private key that is not PEM, and takes the app slug in place of its link', async () => {
    const p = await provider('custom-bad-key', customSpec());
    const { appLink: _link, ...withoutLink } = APP_KEYS;
    await createIntegration(
      kc,
      ns.name,
      'bad-key',
      { provider: p },
      { ...withoutLink, appSlug: 'latchkey-test', privateKey: 'not a key', ...OAUTH_CLIENT },
    );
    const ready = await integrationReady('bad-key', 'InvalidPrivateKey');
    expect(ready.message).toContain('key "privateKey" is not a PEM private key');
    expect(ready.message).not.toContain('not a key');
  });

  it('without a Secret at all: says which keys to put in one', async () => {
    const p = await provider('custom-no-ref', customSpec());
    await createIntegration(kc, ns.name, 'no-ref', { provider: p });
    const ready = await integrationReady('no-ref', 'ClientSecretRefMissing');
    expect(ready.message).toContain('appId, privateKey, appLink, clientId, clientSecret');
  });
});

describe('CUSTOM providers', () => {
  it("checks the user authorization's URL templates against the declared configuration", async () => {
    const bad = await provider('custom-bad-url', customSpec(`https://\${connectionConfig.enterpriseHost}/login/oauth/access_token`));
    const verdict = await providerReady(bad, 'InvalidSpec');
    expect(verdict.message).toContain('spec.appInstallation.userTokenUrl uses ${connectionConfig.enterpriseHost}');
    // An Integration of it waits for the Provider to be fixed.
    await createIntegration(kc, ns.name, 'on-bad-provider', { provider: bad }, { ...APP_KEYS, ...OAUTH_CLIENT });
    await integrationReady('on-bad-provider', 'ProviderNotReady');
  });
});
