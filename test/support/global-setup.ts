import { KubeConfig } from '@kubernetes/client-node';
import { join } from 'node:path';
import { installCrds } from '../../dev/apply.js';
import { REPO_ROOT, startControlPlane, type ControlPlane } from '../../dev/control-plane.js';

/**
 * Jest global setup: one real control plane per test run (or an existing cluster when
 * LATCHKEY_KUBECONFIG is set), with the CRDs installed. Workers inherit LATCHKEY_TEST_KUBECONFIG.
 */
export default async function globalSetup(): Promise<void> {
  let kubeconfigPath = process.env.LATCHKEY_KUBECONFIG;
  if (!kubeconfigPath) {
    const started = Date.now();
    const cp = await startControlPlane({ log: (line) => process.stderr.write(`[controlplane] ${line}\n`) });
    (globalThis as { __LATCHKEY_CP__?: ControlPlane }).__LATCHKEY_CP__ = cp;
    kubeconfigPath = cp.kubeconfigPath;
    // Tests of refused ServiceAccount tokens sign an expired one with the control plane's own key.
    process.env.LATCHKEY_TEST_SA_SIGNING_KEY = join(cp.workDir, 'sa.key');
    process.stderr.write(`[controlplane] started in ${Date.now() - started} ms\n`);
  }
  process.env.LATCHKEY_TEST_KUBECONFIG = kubeconfigPath;
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  await installCrds(kc, join(REPO_ROOT, 'crds'));
}
