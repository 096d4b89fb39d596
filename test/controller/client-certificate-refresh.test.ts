/**
 * A background refresh that cannot present the Integration's TLS client certificate (mutual TLS), against a
 * real control plane and controller: the certificate expired after the Integration was found Ready. The
 * refresh is a configuration error of the Integration (`integration_misconfigured`), not a provider outage:
 * nothing is sent, it is not retried in a loop, the Integration says what is wrong (its certificate, never the
 * key's text), and replacing the certificate's Secret makes it Ready again.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { eventually, testKubeConfig } from '../../dev/cluster.js';
import { createIntegration } from '../../dev/fixtures.js';
import { IntegrationReason } from '../../src/domain/conditions.js';
import { CLIENT_FAULT_ANNOTATION } from '../../src/auth/refresh/integration-fault.js';
import type { IntegrationResource } from '../../src/k8s/resources.js';
import { startControllerBed, type ControllerBed } from '../support/controller-bed.js';
import { readCustom } from '../support/kube.js';
import { createCertificateSecret } from '../support/tls-secrets.js';
import { makeClientCertificate, makeShortLivedClientCertificate } from '../support/test-ca.js';

const kc = testKubeConfig();
let bed: ControllerBed;

beforeAll(async () => {
  bed = await startControllerBed(kc, 'mtls-refresh');
});

afterAll(async () => {
  await bed?.close();
});

async function counted(name: string, provider: string): Promise<Record<string, number>> {
  const m = await bed.replica.ctx.metrics.getSingleMetric(name)!.get();
  const out: Record<string, number> = {};
  for (const v of m.values) if (v.labels.provider === provider) out[String(v.labels.reason)] = v.value;
  return out;
}

it('an expired client certificate: refused as the Integration misconfigured, not retried in a loop, named on the Integration', async () => {
  const provider = await bed.provider('mtls-refresh', {
    displayName: 'Certified refresh',
    authMode: 'OAUTH2',
    authorizationUrl: 'https://auth.example.test/authorize',
    tokenUrl: 'https://auth.example.test/token',
    tokenRequestAuthMethod: 'basic',
    clientCertificate: {},
  });
  const short = makeShortLivedClientCertificate('latchkey-short', 6);
  await createCertificateSecret(kc, bed.ns.name, 'short-cert', { cert: short.cert, key: short.key });
  await createIntegration(
    kc,
    bed.ns.name,
    'certified',
    { provider, clientCertificateRef: { name: 'short-cert' } },
    { clientId: 'c', clientSecret: 'client-secret-0123456789' },
  );
  expect((await bed.readyOf('integrations', 'certified', 'Ready')).ready.status).toBe('True');
  // Expired now; nothing has told the Integration reconciler.
  await new Promise((r) => setTimeout(r, Math.max(0, short.notAfter - Date.now() + 1_000)));

  await bed.replica.ctx.connections.createConnection({
    namespace: bed.ns.name,
    spec: { integration: 'certified', provider, connectionId: 'due', authMode: 'OAUTH2', endUser: { id: 'u1' } },
    credentials: {
      type: 'OAUTH2',
      access_token: 'an-access-token',
      refresh_token: 'a-refresh-token',
      expires_at: new Date(Date.now() - 1_000).toISOString(),
    },
  });

  const failures = await eventually(async () => {
    const f = await counted('latchkey_refresh_failures_total', provider);
    return Object.keys(f).length ? f : undefined;
  }, 20_000);
  // Before: `provider_unavailable` (network), retried after 2 s, 4 s, 8 s, … forever.
  expect(failures).toEqual({ integration_misconfigured: 1 });

  const { ready, obj } = await bed.readyOf<IntegrationResource>('integrations', 'certified', IntegrationReason.InvalidClientCertificate);
  expect(ready.status).toBe('False');
  expect(ready.message).toContain('"short-cert" (spec.clientCertificateRef): the certificate in "tls.crt" expired at');
  const fault = JSON.parse(obj.metadata.annotations![CLIENT_FAULT_ANNOTATION]!) as { detail: string };
  expect(fault.detail).toContain('integration certified cannot be used');
  expect(fault.detail).toContain('expired at');
  expect(JSON.stringify(obj)).not.toContain('PRIVATE KEY');

  // Not retried in a loop: still the one attempt a while later (a transient failure retries after about 2 s).
  await new Promise((r) => setTimeout(r, 5_000));
  expect(await counted('latchkey_refresh_attempts_total', provider)).toEqual({ schedule: 1 });
  expect(await counted('latchkey_refresh_failures_total', provider)).toEqual({ integration_misconfigured: 1 });

  // The operator replaces the certificate: the Integration is Ready again (the fault was fenced on the old Secret).
  const fresh = makeClientCertificate('latchkey-renewed');
  const core = kc.makeApiClient(CoreV1Api);
  const secret = await core.readNamespacedSecret({ namespace: bed.ns.name, name: 'short-cert' });
  await core.replaceNamespacedSecret({
    namespace: bed.ns.name,
    name: 'short-cert',
    body: {
      ...secret,
      data: { 'tls.crt': Buffer.from(fresh.cert).toString('base64'), 'tls.key': Buffer.from(fresh.key).toString('base64') },
    },
  });
  await eventually(async () => {
    const i = await readCustom<IntegrationResource>(kc, 'integrations', bed.ns.name, 'certified');
    return i.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  }, 20_000);
});
