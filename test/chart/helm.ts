/**
 * Helpers for the in-cluster chart tests: run helm (built by test/chart/tools.sh) against the test
 * control plane, read back what a release rendered, and build a KubeConfig that impersonates a
 * ServiceAccount.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig, KubernetesObjectApi, loadAllYaml, type KubernetesObject } from '@kubernetes/client-node';
import { statusOf } from '../../src/k8s/errors.js';
import { REPO_ROOT } from '../../dev/control-plane.js';
import { applyProvider, createEnvironment, createIntegration, type TestEnvironment } from '../../dev/fixtures.js';

export const CHART = join(REPO_ROOT, 'charts/latchkey');

/**
 * `helm install` of the chart as release `release` in `namespace`, watching `watched`, with neither the CRDs
 * nor the catalog (the test control plane has the CRDs; other suites apply Providers of their own).
 */
/** What a platform team creates (as admin): an API-key Provider proxying to api.example.test, an Environment and a `keys` Integration. */
export async function platformObjects(
  kc: KubeConfig,
  namespace: string,
  providerName: string,
  displayName: string,
): Promise<TestEnvironment> {
  await applyProvider(kc, providerName, {
    displayName,
    authMode: 'API_KEY',
    proxy: { baseUrl: 'https://api.example.test', headers: { authorization: 'Bearer ${apiKey}' } },
  });
  const env = await createEnvironment(kc, namespace);
  await createIntegration(kc, namespace, 'keys', { provider: providerName });
  return env;
}

export function installWithoutCrdsOrCatalog(release: string, namespace: string, watched: string[]): string[] {
  return [
    'install',
    release,
    CHART,
    '-n',
    namespace,
    '--set',
    `rbac.namespaces={${watched.join(',')}}`,
    '--set',
    'crds.install=false',
    '--set',
    'catalog.install=false',
  ];
}

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion (never throws for a non-zero exit; the caller asserts the code). */
export function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env, timeoutMs = 600_000): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

/** Throws with the command's output when it did not exit 0 (so a failure shows why). */
export function mustSucceed(what: string, r: Ran): Ran {
  if (r.code !== 0)
    throw new Error(`${what} exited ${r.code}\n--- stdout ---\n${r.stdout.slice(-4000)}\n--- stderr ---\n${r.stderr.slice(-4000)}`);
  return r;
}

/** helm with the test kubeconfig and its own cache/config/data folders (nothing written to $HOME). */
export class Helm {
  private readonly home = mkdtempSync(join(tmpdir(), 'latchkey-helm-'));

  constructor(
    readonly path: string,
    private readonly kubeconfigPath: string,
  ) {}

  static async build(kubeconfigPath: string): Promise<Helm> {
    // The first run builds helm with `go install` (minutes); later runs print the cached path.
    const r = mustSucceed(
      'test/chart/tools.sh helm',
      await run('bash', [join(REPO_ROOT, 'test/chart/tools.sh'), 'helm'], process.env, 1_200_000),
    );
    return new Helm(r.stdout.trim().split('\n').pop()!, kubeconfigPath);
  }

  /** `timeoutMs` kills helm after that long (3 minutes by default; the e2e's install waits on the whole catalog). */
  run(args: string[], timeoutMs = 180_000): Promise<Ran> {
    return run(
      this.path,
      args,
      {
        PATH: process.env.PATH,
        HOME: this.home,
        KUBECONFIG: this.kubeconfigPath,
        HELM_CACHE_HOME: join(this.home, 'cache'),
        HELM_CONFIG_HOME: join(this.home, 'config'),
        HELM_DATA_HOME: join(this.home, 'data'),
      },
      timeoutMs,
    );
  }

  async ok(args: string[], timeoutMs?: number): Promise<string> {
    return mustSucceed(`helm ${args.join(' ')}`, await this.run(args, timeoutMs)).stdout;
  }

  /** The objects of a release's current revision, as rendered. */
  async manifest(release: string, namespace: string): Promise<KubernetesObject[]> {
    const text = await this.ok(['get', 'manifest', release, '-n', namespace]);
    return (loadAllYaml(text) as KubernetesObject[]).filter((o) => o && o.kind);
  }

  cleanup(): void {
    rmSync(this.home, { recursive: true, force: true });
  }
}

const CLUSTER_SCOPED = new Set(['CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'Provider', 'Namespace']);

/** Reads an object back from the API server; undefined when it does not exist. */
export async function readBack(kc: KubeConfig, obj: KubernetesObject, releaseNamespace: string): Promise<KubernetesObject | undefined> {
  const client = KubernetesObjectApi.makeApiClient(kc);
  const namespace = CLUSTER_SCOPED.has(obj.kind!) ? undefined : (obj.metadata?.namespace ?? releaseNamespace);
  try {
    return await client.read({ apiVersion: obj.apiVersion!, kind: obj.kind!, metadata: { name: obj.metadata!.name!, namespace } });
  } catch (err) {
    if (statusOf(err) === 404) return undefined;
    throw err;
  }
}

export const describeObject = (o: KubernetesObject) =>
  `${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name}`;

/**
 * The test control plane's admin credentials, impersonating `user` (the Impersonate-User header that
 * client-node sends for a kubeconfig user's `as`). For a ServiceAccount user name the API server adds
 * the groups system:serviceaccounts and system:serviceaccounts:<namespace> itself.
 */
export function impersonating(admin: KubeConfig, user: string): KubeConfig {
  const kc = new KubeConfig();
  const current = admin.getCurrentUser()!;
  const cluster = admin.getCurrentCluster()!;
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ ...current, name: 'impersonated', impersonateUser: user }],
    contexts: [{ name: 'impersonated', cluster: cluster.name, user: 'impersonated' }],
    currentContext: 'impersonated',
  });
  return kc;
}
