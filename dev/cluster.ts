import { randomBytes } from 'node:crypto';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { createLogger, type Logger } from '../src/platform/log.js';

/** Kubeconfig of the run's control plane (set by the Jest global setup). */
export function testKubeConfig(): KubeConfig {
  const path = process.env.LATCHKEY_TEST_KUBECONFIG;
  if (!path) throw new Error('LATCHKEY_TEST_KUBECONFIG is not set: run the tests with `npm test`');
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

/** A fresh namespace for one test file; delete() removes it (kube-controller-manager finishes the job). */
export async function createTestNamespace(kc: KubeConfig, prefix: string): Promise<{ name: string; delete(): Promise<void> }> {
  const core = kc.makeApiClient(CoreV1Api);
  const name = `t-${prefix}-${randomBytes(3).toString('hex')}`.toLowerCase().slice(0, 63);
  await core.createNamespace({ body: { metadata: { name, labels: { 'latchkey.dev/test': 'true' } } } });
  return {
    name,
    async delete() {
      await core.deleteNamespace({ name }).catch(() => undefined);
    },
  };
}

/** A logger for tests: silent unless LATCHKEY_TEST_LOG_LEVEL is set. */
export function testLogger(): Logger {
  return createLogger(process.env.LATCHKEY_TEST_LOG_LEVEL ?? 'silent');
}

/** Polls `check` until it returns a truthy value or the time is up. */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 20_000, intervalMs = 100): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`condition not met within ${timeoutMs} ms${lastError ? `: ${(lastError as Error).message}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
