/**
 * `npm start`: runs Latchkey's controller and HTTP server on this machine against the current kube
 * context, or against a local control plane built from source when there is no cluster. The local
 * control plane keeps its data in ~/.local/share/latchkey/ (or $LATCHKEY_DATA_DIR), so connections,
 * keys and settings survive a restart; `npm start -- --reset` wipes it first. Installs the CRDs, the
 * whole provider catalog (config/providers/) and config/samples/, and prints the sample Environment's
 * secret key. Ctrl-C stops everything it started. One launcher per data directory: a second one exits
 * at once, naming the process that holds it (`dev/data-dir-lock.ts`).
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { loadConfig } from '../src/platform/config.js';
import { LOOPBACK_PEERS } from './egress.js';
import { applyManifests, installCrds, readManifests } from './apply.js';
import { isNotFound } from '../src/k8s/errors.js';
import { createLogger } from '../src/platform/log.js';
import { runLatchkey } from '../src/app/run.js';
import { REPO_ROOT, startControlPlane, type ControlPlane } from './control-plane.js';
import { lockDataDir } from './data-dir-lock.js';

const SAMPLE_NAMESPACE = 'latchkey-samples';
const SAMPLE_KEYS_SECRET = 'latchkey-sample-keys';
const APPLY_CONCURRENCY = 16;

/** Where the local control plane keeps its data between runs. */
function dataDir(): string {
  if (process.env.LATCHKEY_DATA_DIR) return process.env.LATCHKEY_DATA_DIR;
  return join(process.env.XDG_DATA_HOME || join(homedir(), '.local/share'), 'latchkey');
}

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
  const args = process.argv.slice(2);
  const unknown = args.filter((a) => a !== '--reset');
  if (unknown.length) throw new Error(`unknown argument ${unknown.join(' ')} (the only one is --reset)`);
  // Local peers (an OAuth server or API on this machine) are on loopback, which the egress guard
  // refuses unless allowed; LATCHKEY_EGRESS_ALLOW in the environment replaces this default.
  const config = loadConfig({ LATCHKEY_EGRESS_ALLOW: LOOPBACK_PEERS, ...process.env });
  const logger = createLogger(config.logLevel);
  logger.warn(
    { egressAllow: config.egressAllow.join(',') },
    'npm start: outbound calls may reach these loopback peers (LATCHKEY_EGRESS_ALLOW)',
  );
  // Stop on Ctrl-C from the start: the first run's build, and the control plane once started.
  let stopRequested = false;
  let stop: () => Promise<void> = async () => process.exit(130);
  const onSignal = () => {
    if (stopRequested) return;
    stopRequested = true;
    void stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
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
    // Before anything in the directory is read or written (--reset included): a second launcher
    // stops here, naming the first, and leaves its control plane alone. Released on exit.
    lockDataDir(dataDir());
    if (!hasGo()) {
      throw new Error(
        'No Kubernetes cluster is reachable and Go is not installed, so no local control plane can be built.\n' +
          'Either install Go 1.26 (https://go.dev/dl/) and run `npm start` again, or point LATCHKEY_KUBECONFIG at a cluster (kind, k3d, ...).',
      );
    }
    const dir = join(dataDir(), 'controlplane');
    if (args.includes('--reset')) {
      rmSync(dir, { recursive: true, force: true });
      logger.info({ dataDir: dir }, 'reset: deleted the local control plane and everything stored in it');
    }
    logger.info({ dataDir: dir }, 'no cluster reachable: starting the local control plane (the first run builds it, which takes a while)');
    controlPlane = await startControlPlane({ log: (line) => logger.info(line), dataDir: dir });
    const started = controlPlane;
    stop = async () => {
      await started.stop();
      process.exit(130);
    };
    if (stopRequested) return void stop();
    kc = new KubeConfig();
    kc.loadFromFile(controlPlane.kubeconfigPath);
    logger.info(
      { kubeconfig: controlPlane.kubeconfigPath },
      'local control plane ready; use it with: export KUBECONFIG=' + controlPlane.kubeconfigPath,
    );
  } else if (args.includes('--reset')) {
    logger.warn('--reset wipes only the local control plane; this run uses the cluster of your kube context, which it leaves alone');
  }

  await installCrds(kc, join(REPO_ROOT, 'crds'));
  const catalog = await installCatalog(kc);
  logger.info({ providers: catalog.size }, 'installed the provider catalog (config/providers/)');
  const secretKey = await ensureSamples(kc, catalog);
  const running = await runLatchkey({ config, logger, kc, components: ['server', 'controller'] });
  stop = async () => {
    await running.stop();
    await controlPlane?.stop();
    process.exit(0);
  };
  if (stopRequested) return void stop();

  process.stdout.write(
    [
      '',
      `Latchkey is running at ${running.server!.url}`,
      `  sample environment: namespace ${SAMPLE_NAMESPACE}`,
      `  secret key:         ${secretKey}`,
      `  try:                curl -H "Authorization: Bearer ${secretKey}" ${running.server!.url}/providers/github`,
      '  stop:               Ctrl-C',
      ...(controlPlane ? [`  data:               ${dataDir()} (kept across restarts; npm start -- --reset wipes it)`] : []),
      '',
    ].join('\n'),
  );
}

/** Applies every Provider of config/providers/ (server-side apply, in parallel); returns their names. */
async function installCatalog(kc: KubeConfig): Promise<Set<string>> {
  const providers = readManifests(join(REPO_ROOT, 'config/providers')).filter((o) => o.kind === 'Provider');
  await applyManifests(kc, providers, undefined, APPLY_CONCURRENCY);
  return new Set(providers.map((p) => p.metadata!.name!));
}

/**
 * Applies config/samples and makes sure the sample Environment's key Secret exists (created once, so
 * the key stays the same across restarts). The catalog's Providers win over the samples' own copies.
 */
async function ensureSamples(kc: KubeConfig, catalog: Set<string>): Promise<string> {
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
  const samples = readManifests(join(REPO_ROOT, 'config/samples')).filter(
    (o) => !(o.kind === 'Provider' && catalog.has(o.metadata!.name!)),
  );
  await applyManifests(kc, samples, SAMPLE_NAMESPACE);
  return secretKey;
}

main().catch((err: unknown) => {
  process.stderr.write(`\nnpm start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
