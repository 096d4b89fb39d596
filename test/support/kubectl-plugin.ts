/**
 * Runs the built `kubectl latchkey` (dist/src/app/kubectl-latchkey.js) as its own process, the way
 * kubectl runs a plugin, with a kubeconfig file; and makes kubeconfig files for ServiceAccounts, so
 * that a test runs it as a person with only the RBAC a Role grants.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api, type V1PolicyRule } from '@kubernetes/client-node';
import { REPO_ROOT } from '../../dev/control-plane.js';

export interface PluginRun {
  code: number;
  stdout: string;
  stderr: string;
}

const PLUGIN = join(REPO_ROOT, 'dist/src/app/kubectl-latchkey.js');

/** Runs the plugin with `--kubeconfig`; the environment carries no KUBECONFIG, so only that file counts. */
export function runPlugin(kubeconfig: string, args: string[], env: Record<string, string> = {}): Promise<PluginRun> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'KUBECONFIG' && !k.startsWith('LATCHKEY_')));
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [PLUGIN, ...args, '--kubeconfig', kubeconfig],
      { env: { ...clean, ...env }, timeout: 90_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * A ServiceAccount in `namespace` bound to a Role with `rules`, and a kubeconfig file that signs in
 * with a TokenRequest token of it (the API server's own audience, unless `audiences` are given).
 */
export async function serviceAccountKubeconfig(
  kc: KubeConfig,
  namespace: string,
  name: string,
  rules: V1PolicyRule[],
  opts: { audiences?: string[] } = {},
): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  if (rules.length) {
    await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects: [{ kind: 'ServiceAccount', name, namespace }],
      },
    });
  }
  const token = await core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences: opts.audiences ?? [], expirationSeconds: 3600 } },
  });
  const cluster = kc.getCurrentCluster()!;
  const out = new KubeConfig();
  out.loadFromOptions({
    clusters: [cluster],
    users: [{ name, token: token.status!.token }],
    contexts: [{ name, cluster: cluster.name, user: name, namespace }],
    currentContext: name,
  });
  const path = join(mkdtempSync(join(tmpdir(), 'latchkey-kubectl-')), 'config');
  writeFileSync(path, out.exportConfig(), { mode: 0o600 });
  return path;
}
