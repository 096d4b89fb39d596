/**
 * Stopping the leader election when the API server hangs (as it does while it shuts down with its
 * etcd gone): the lease requests in flight get no answer, and stop() still returns within seconds
 * instead of waiting out the request timeout. The API server is the real one, behind a TCP proxy
 * that the test makes stall.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { LeaderElector } from '../../src/controller/leader-election.js';
import { Leases } from '../../src/k8s/leases.js';
import { createTestNamespace, eventually, testKubeConfig, testLogger } from '../../dev/cluster.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

const kc = testKubeConfig();

it('a leader stops within seconds although the API server no longer answers', async () => {
  const ns = await createTestNamespace(kc, 'leader-stop');
  const target = new URL(kc.getCurrentCluster()!.server);
  const proxy = await startTcpProxy(target.hostname, Number(target.port));
  const viaProxy = new KubeConfig();
  viaProxy.loadFromString(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'p',
      clusters: [{ name: 'p', cluster: { server: `https://127.0.0.1:${proxy.port}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: { token: kc.getCurrentUser()!.token } }],
      contexts: [{ name: 'p', context: { cluster: 'p', user: 'u' } }],
    }),
  );
  let stoppedLeading = false;
  const elector = new LeaderElector({
    leases: new Leases(viaProxy),
    namespace: ns.name,
    name: 'latchkey-controller',
    identity: 'stopping-leader',
    leaseDurationSeconds: 60,
    renewIntervalMs: 200,
    logger: testLogger(),
    onStartedLeading: () => undefined,
    onStoppedLeading: () => void (stoppedLeading = true),
  });
  try {
    elector.start();
    await eventually(() => elector.isLeader, 10_000);
    // From now on every request hangs: the renewals in flight, and the release on stop.
    proxy.stall(true);
    proxy.cut();
    // A renewal is in flight and hanging before the stop.
    await eventually(() => proxy.stalled() > 0, 30_000);
    const outcome = await Promise.race([
      elector.stop().then(() => 'stopped'),
      new Promise((r) => setTimeout(() => r('still waiting after 20 s'), 20_000).unref()),
    ]);
    expect(outcome).toBe('stopped');
    expect([elector.isLeader, stoppedLeading]).toEqual([false, true]);
  } finally {
    await proxy.close();
    await ns.delete();
  }
}, 60_000);
