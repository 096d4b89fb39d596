/**
 * `npm start`: runs Latchkey's controller and HTTP server on this machine against the current kube
 * context, or against a local control plane built from source when there is no cluster. Installs
 * the CRDs, applies config/samples/ and prints the sample Environment's secret key. Ctrl-C stops
 * everything it started.
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { loadConfig } from '../src/app/config.js';
import { LOOPBACK_PEERS } from './egress.js';
import { applyManifests, installCrds, readManifests } from './apply.js';
import { isNotFound } from '../src/k8s/errors.js';
import { createLogger } from '../src/app/log.js';
import { runLatchkey } from '../src/app/run.js';
import { REPO_ROOT, startControlPlane, type ControlPlane } from './control-plane.js';

const SAMPLE_NAMESPACE = 'latchkey-samples';
const SAMPLE_KEYS_SECRET = 'latchkey-sample-keys';

async function reachable(kc: KubeConfig): Promise<boolean> {
  if (!kc.getCurrentCluster()?.server) return false;
  try {
    await kc.makeApiClient(CoreV1Api).listNamespace({ limit: 1 });
    return true;
  } catch {
    return false;
  }
}

function hasGo(): boolean {
  // dev/controlplane/build.sh also looks in /usr/local/go/bin when Go is not on PATH.
  for (const go of ['go', '/usr/local/go/bin/go']) {
    try {
      execFileSync(go, ['version'], { stdio: 'ignore' });
      return true;
    } catch {
      // try the next
    }
  }
  return false;
}

async function main(): Promise<void> {
  // Local peers (an OAuth server or API on this machine) are on loopback, which the egress guard
  // refuses unless allowed; LATCHKEY_EGRESS_ALLOW in the environment replaces this default.
  const config = loadConfig({ LATCHKEY_EGRESS_ALLOW: LOOPBACK_PEERS, ...process.env });
  const logger = createLogger(config.logLevel);
  logger.warn(
    { egressAllow: config.egressAllow.join(',') },
    'npm start: outbound calls may reach these loopback peers (LATCHKEY_EGRESS_ALLOW)',
  );
  let controlPlane: ControlPlane | undefined;
  let kc = new KubeConfig();
  if (config.kubeconfig) kc.loadFromFile(config.kubeconfig);
  else {
    try {
      kc.loadFromDefault();
    } catch {
      kc = new KubeConfig();
    }
  }
  if (!(await reachable(kc))) {
    if (config.kubeconfig) throw new Error(`the cluster in LATCHKEY_KUBECONFIG (${config.kubeconfig}) is not reachable`);
    if (!hasGo()) {
      throw new Error(
        'No Kubernetes cluster is reachable and Go is not installed, so no local control plane can be built.\n' +
          'Either install Go 1.26 (https://go.dev/dl/) and run `npm start` again, or point LATCHKEY_KUBECONFIG at a cluster (kind, k3d, ...).',
      );
    }
    logger.info('no cluster reachable: starting a local control plane (the first run builds it, which takes a while)');
    controlPlane = await startControlPlane({ log: (line) => logger.info(line) });
    kc = new KubeConfig();
    kc.loadFromFile(controlPlane.kubeconfigPath);
    logger.info(
      { kubeconfig: controlPlane.kubeconfigPath },
      'local control plane ready; use it with: export KUBECONFIG=' + controlPlane.kubeconfigPath,
    );
  }

  await installCrds(kc, join(REPO_ROOT, 'crds'));
  const secretKey = await ensureSamples(kc);
  const running = await runLatchkey({ config, logger, kc, components: ['server', 'controller'] });

  process.stdout.write(
    [
      '',
      `Latchkey is running at ${running.server!.url}`,
      `  sample environment: namespace ${SAMPLE_NAMESPACE}`,
      `  secret key:         ${secretKey}`,
      `  try:                curl -H "Authorization: Bearer ${secretKey}" ${running.server!.url}/providers/github`,
      '  stop:               Ctrl-C',
      '',
    ].join('\n'),
  );

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await running.stop();
    await controlPlane?.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

/** Applies config/samples and makes sure the sample Environment's key Secret exists. */
async function ensureSamples(kc: KubeConfig): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  try {
    await core.readNamespace({ name: SAMPLE_NAMESPACE });
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await core.createNamespace({ body: { metadata: { name: SAMPLE_NAMESPACE } } });
  }
  let secretKey: string;
  try {
    const s = await core.readNamespacedSecret({ namespace: SAMPLE_NAMESPACE, name: SAMPLE_KEYS_SECRET });
    secretKey = Buffer.from(s.data!.secretKey!, 'base64').toString('utf8');
  } catch (err) {
    if (!isNotFound(err)) throw err;
    // Generated here rather than committed: a key in a sample file would be a published secret.
    secretKey = `sk_${randomBytes(24).toString('hex')}`;
    await core.createNamespacedSecret({
      namespace: SAMPLE_NAMESPACE,
      body: {
        metadata: { name: SAMPLE_KEYS_SECRET, labels: { 'latchkey.dev/watch': 'true' } },
        stringData: { secretKey, webhookSigningKey: `whsec_${randomBytes(24).toString('base64')}` },
      },
    });
  }
  await applyManifests(kc, readManifests(join(REPO_ROOT, 'config/samples')), SAMPLE_NAMESPACE);
  return secretKey;
}

main().catch((err: unknown) => {
  process.stderr.write(`\nnpm start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
