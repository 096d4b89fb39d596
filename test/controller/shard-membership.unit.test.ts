/**
 * Unit tests of shard membership timing (no cluster needed): the Leases are an in-memory stand-in
 * for coordination.k8s.io (hand-written: the real API server's Leases are exercised by
 * sharding.test.ts and the fault tests), and time is Jest's fake clock so the bounds are exact.
 */
import { jest } from '@jest/globals';
import type { AcquireResult, LeaseState } from '../../src/k8s/leases.js';
import { createLogger } from '../../src/platform/log.js';
import { ShardMembership, type ShardLeaseClient } from '../../src/controller/shard-membership.js';

class MemoryLeases implements ShardLeaseClient {
  readonly leases = new Map<string, LeaseState & { name: string }>();
  private version = 0;

  async tryAcquire(_ns: string, name: string, holder: string, durationSeconds: number): Promise<AcquireResult> {
    const now = Date.now();
    const current = this.leases.get(name);
    if (current?.holder && current.holder !== holder && now <= current.renewedAt + current.durationSeconds * 1000) {
      return { acquired: false, lease: current };
    }
    const lease = {
      name,
      holder,
      annotations: {},
      renewedAt: now,
      durationSeconds,
      transitions: 0,
      resourceVersion: String(++this.version),
    };
    this.leases.set(name, lease);
    return { acquired: true, lease };
  }

  async list(): Promise<Array<LeaseState & { name: string }>> {
    return [...this.leases.values()];
  }

  async delete(_ns: string, name: string): Promise<void> {
    this.leases.delete(name);
  }

  async deleteIfUnchanged(_ns: string, name: string, resourceVersion: string): Promise<void> {
    if (this.leases.get(name)?.resourceVersion === resourceVersion) this.leases.delete(name);
  }
}

function member(leases: MemoryLeases, identity: string): ShardMembership {
  return new ShardMembership({
    leases,
    namespace: 'ns',
    identity,
    leaseDurationSeconds: 1, // renews every 333 ms
    logger: createLogger('silent'),
    onChange: () => undefined,
  });
}

describe('ShardMembership', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('drops a member that stopped renewing just after its Lease expires, not up to a renew interval later', async () => {
    const leases = new MemoryLeases();
    const a = member(leases, 'a');
    const b = member(leases, 'b');
    a.start();
    b.start();
    await jest.advanceTimersByTimeAsync(2_000);
    expect(a.members).toEqual(['a', 'b']);
    expect(a.active).toBe(true);

    // b dies without releasing its Lease (SIGKILL): it renewed on the same beat as a's reads, so its
    // expiry falls just after one of them and the next regular read would come a renew interval later.
    await b.stop({ release: false });
    const lastRenewal = leases.leases.get('latchkey-shard-b')!.renewedAt;
    const expiry = lastRenewal + 1_000;
    let droppedAt: number | undefined;
    while (droppedAt === undefined && Date.now() < expiry + 2_000) {
      await jest.advanceTimersByTimeAsync(10);
      if (!a.members.includes('b')) droppedAt = Date.now();
    }
    expect(droppedAt).toBeDefined();
    expect(droppedAt!).toBeGreaterThan(expiry); // never before the Lease expired
    expect(droppedAt! - expiry).toBeLessThanOrEqual(150); // 100 ms past the expiry, plus the 10 ms steps
    expect(a.active).toBe(true);
    await a.stop();
  });

  it('reads the Leases once per renew interval while every member renews', async () => {
    const leases = new MemoryLeases();
    let lists = 0;
    const list = leases.list.bind(leases);
    leases.list = async () => (lists++, list());
    const a = member(leases, 'a');
    const b = member(leases, 'b');
    a.start();
    b.start();
    await jest.advanceTimersByTimeAsync(10_000);
    // Two members, each about 30 reads in 10 s at 333 ms: waking early only when a peer is due to expire adds none.
    expect(lists).toBeGreaterThanOrEqual(56);
    expect(lists).toBeLessThanOrEqual(64);
    expect(a.members).toEqual(['a', 'b']);
    await a.stop();
    await b.stop();
  });
});
