import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from '../../src/platform/config.js';
import { LOOPBACK_PEERS } from '../../dev/egress.js';

/**
 * The one test configuration: the defaults of `loadConfig` with what tests need instead (their
 * namespaces, a short Lease, quick webhook retries, a unique identity); `overrides` wins.
 */
export function testConfig(namespaces: string[], overrides: Partial<Config> = {}): Config {
  return {
    // Test peers (OAuth servers, upstreams, receivers) listen on loopback: allowed through the egress guard.
    ...loadConfig({
      LATCHKEY_LOG_LEVEL: 'silent',
      LATCHKEY_PUBLIC_BASE_URL: 'https://latchkey.example.test',
      LATCHKEY_EGRESS_ALLOW: LOOPBACK_PEERS,
    }),
    watchNamespaces: namespaces,
    leaseNamespace: namespaces[0] ?? 'default',
    leaseName: 'latchkey-controller',
    leaseDurationSeconds: 3,
    identity: `test-${randomBytes(3).toString('hex')}`,
    webhookMaxAttempts: 8,
    webhookBackoffBaseSeconds: 0.2,
    webhookBackoffMaxSeconds: 1,
    // The tests' tokens live 10 s and more: a floor below that (the default 60 s would hold them back).
    refreshFloorSeconds: 3,
    ...overrides,
  };
}
