/**
 * Stopping the leader election when the API server hangs (as it does while it shuts down with its
 * etcd gone): the lease requests in flight get no answer, and stop() returns without waiting out their
 * request timeout (the hanging request is still open when it returns). The API server is the real one,
 * behind a TCP proxy that the test makes stall.
 */
import { LeaderElector } from '../../src/controller/leader-election.js';
import { Leases } from '../../src/k8s/leases.js';
import { createTestNamespace, eventually, testKubeConfig, testLogger } from '../../dev/cluster.js';
import { apiServerBehindProxy } from '../support/tcp-proxy.js';

const kc = testKubeConfig();

it('a leader stops without waiting for the requests the hanging API server never answers', async () => {
  const ns = await createTestNamespace(kc, 'leader-stop');
  const { proxy, kc: viaProxy } = await apiServerBehindProxy(kc);
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
    const hanging = proxy.openStalled();
    await elector.stop();
    // stop() did not wait for the renewal's answer or its timeout: that request is still open at the proxy.
    const stillOpen = proxy.openStalled();
    expect([...hanging].some((s) => stillOpen.has(s))).toBe(true);
    expect([elector.isLeader, stoppedLeading]).toEqual([false, true]);
  } finally {
    await proxy.close();
    await ns.delete();
  }
}, 60_000);
