/** The controller's periodic resync queues every owned connection again only once its queue has emptied. */
import { PeriodicResync } from '../../src/controller/periodic-resync.js';

describe('PeriodicResync', () => {
  it('resyncs on an empty queue and skips the turn while keys are still queued', () => {
    let queued = 3;
    let resyncs = 0;
    const resync = new PeriodicResync({ intervalMs: 3_600_000, queued: () => queued, resync: () => void resyncs++ });
    try {
      expect(resync.tick()).toBe(false);
      expect(resyncs).toBe(0);
      queued = 0;
      expect(resync.tick()).toBe(true);
      expect(resyncs).toBe(1);
    } finally {
      resync.stop();
    }
  });

  it('runs on its interval', async () => {
    let resyncs = 0;
    const resync = new PeriodicResync({ intervalMs: 10, queued: () => 0, resync: () => void resyncs++ });
    try {
      await new Promise((r) => setTimeout(r, 100));
      expect(resyncs).toBeGreaterThan(0);
    } finally {
      resync.stop();
    }
  });
});
