/**
 * The controller's compaction when it goes quiet after its heap grew: the decision, with the RSS,
 * the event loop's utilization and the clock passed in. What it saves is measured in bench/memory.ts.
 */
import { startIdleCompaction } from '../../src/app/idle-compaction.js';

const MiB = 2 ** 20;
const started: Array<{ stop(): void }> = [];
afterEach(() => started.splice(0).forEach((s) => s.stop()));

function bed(start: { rss: number }) {
  const state = { rss: start.rss, busy: 0, now: 0, compactions: 0, seen: [] as Array<{ busy: number; compacts: boolean }> };
  const idle = startIdleCompaction({
    compact: () => {
      state.compactions++;
      state.rss -= 30 * MiB;
    },
    rss: () => state.rss,
    utilization: () => state.busy,
    now: () => state.now,
    onCheck: (seen) => state.seen.push(seen),
    intervalMs: 3_600_000,
    minGapMs: 120_000,
  });
  started.push(idle);
  return { state, idle };
}

describe('startIdleCompaction', () => {
  it('compacts once the event loop is quiet, the RSS has grown, and the last compaction is old enough', () => {
    const { state, idle } = bed({ rss: 200 * MiB });
    state.rss += 40 * MiB;
    state.now = 60_000;
    expect(idle.check()).toBe(false); // too soon after the last compaction
    state.now = 130_000;
    state.busy = 0.4;
    expect(idle.check()).toBe(false); // busy
    state.busy = 0.01;
    expect(idle.check()).toBe(true);
    expect(state.compactions).toBe(1);
    // Each check says what it saw (the controller logs it at debug).
    expect(state.seen.map((c) => c.compacts)).toEqual([false, false, true]);
    expect(state.seen[1]).toMatchObject({ busy: 0.4, rssMiB: 240, baselineMiB: 200, sinceLastSeconds: 130 });
    // Growth now counts from after this compaction (210 MiB).
    state.now = 400_000;
    state.rss += 15 * MiB;
    expect(idle.check()).toBe(false);
    state.rss += 10 * MiB; // 235: 25 MiB over 210, more than both 16 MiB and 10 %
    expect(idle.check()).toBe(true);
    expect(state.compactions).toBe(2);
  });

  it('counts growth from a compaction it is told about, and needs the larger of 16 MiB and 10 %', () => {
    const { state, idle } = bed({ rss: 400 * MiB });
    state.now = 200_000;
    state.rss = 430 * MiB; // 30 MiB: over 16 MiB, under 10 % of 400
    expect(idle.check()).toBe(false);
    state.rss = 445 * MiB;
    idle.compacted(); // e.g. the reconcile wave's compaction: baseline 445, and the gap starts again
    state.rss = 500 * MiB;
    expect(idle.check()).toBe(false);
    state.now = 330_000;
    expect(idle.check()).toBe(true);
  });
});
