/** Unit tests of the controller's work queue (no cluster needed). */
import { backoffDelay } from '../../src/domain/backoff.js';
import { WorkQueue } from '../../src/controller/workqueue.js';
import { terminalIfRefused } from '../../src/controller/reconcilers/terminal.js';
import { TerminalError } from '../../src/domain/errors.js';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** One worker: `seen` tells the order the keys ran in; `then` runs after each key is recorded. */
function recordingQueue(then: (key: string) => Promise<void> | void) {
  const seen: string[] = [];
  const queue = new WorkQueue({
    name: 't',
    concurrency: 1,
    handler: async (k) => {
      seen.push(k);
      await then(k);
    },
  });
  return { queue, seen };
}

/** One worker, held by the key 'block' until `gate` opens: keys added meanwhile wait, and `seen` tells the order they ran in. */
function queueHeldByBlock() {
  const gate = deferred();
  const { queue, seen } = recordingQueue(async (k) => {
    if (k === 'block') await gate.promise;
  });
  queue.add('block');
  return { queue, seen, gate };
}

describe('WorkQueue', () => {
  it('never runs one key twice at once, and runs it once more when it was added while running', async () => {
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    const gate = deferred();
    const queue = new WorkQueue({
      name: 't',
      concurrency: 4,
      handler: async () => {
        active++;
        maxActive = Math.max(maxActive, active);
        runs++;
        if (runs === 1) await gate.promise;
        active--;
      },
    });
    queue.add('a');
    expect(queue.active).toBe(1); // a handler starts as its key is added
    for (let i = 0; i < 5; i++) queue.add('a'); // while the first run is in progress
    expect(queue.depth).toBe(0); // marked dirty, not queued twice
    gate.resolve();
    await queue.idle(); // the first run's end, then the second run's

    expect(maxActive).toBe(1);
    expect(runs).toBe(2);
    await queue.stop();
  });

  it('runs a key that waits in the queue only once however often it is added', async () => {
    const { queue, seen, gate } = queueHeldByBlock();
    queue.add('x');
    queue.add('x');
    queue.add('x');
    expect(queue.depth).toBe(1);
    gate.resolve();
    await queue.idle();
    expect(seen).toEqual(['block', 'x']);
    await queue.stop();
  });

  it('runs waiting keys earliest due first, keys due together in the order they came', async () => {
    const { queue, seen, gate } = queueHeldByBlock();
    const now = Date.now();
    queue.add('late', now + 1_000);
    queue.add('first-of-now', now);
    queue.addAfter('overdue-most', -60_000); // due a minute ago: a replica taking over a dead one's key
    queue.add('second-of-now', now);
    queue.addAfter('overdue', -5_000);
    queue.add('late', now - 10_000); // due earlier than first said: moves up
    queue.add('dropped', now - 100_000);
    queue.remove('dropped');
    expect(queue.depth).toBe(5);
    gate.resolve();
    await queue.idle();
    expect(seen).toEqual(['block', 'overdue-most', 'late', 'overdue', 'first-of-now', 'second-of-now']);
    expect(queue.depth).toBe(0);
    await queue.stop();
  });

  it('keeps the due time of a key added while it ran: it runs again in that place, not behind keys due after it', async () => {
    const { queue, seen, gate } = queueHeldByBlock(); // 'block' runs
    const now = Date.now();
    queue.add('b', now - 30_000); // waits: due before now, after what 'block' asks next
    queue.add('block', now - 60_000); // while it runs: due a minute ago
    queue.add('block', now + 5_000); // a later time does not push it back
    gate.resolve();
    await queue.idle();
    expect(seen).toEqual(['block', 'block', 'b']);
    await queue.stop();
  });

  it('keeps the number of handlers running at the concurrency bound', async () => {
    let active = 0;
    let maxActive = 0;
    const gate = deferred();
    const depths: number[] = [];
    const queue = new WorkQueue({
      name: 't',
      concurrency: 3,
      onDepth: (d) => depths.push(d),
      handler: async () => {
        active++;
        maxActive = Math.max(maxActive, active);
        await gate.promise;
        active--;
      },
    });
    for (let i = 0; i < 10; i++) queue.add(`k${i}`);
    expect(queue.active).toBe(3);
    expect(queue.depth).toBe(7);
    gate.resolve();
    await queue.idle();
    expect(maxActive).toBe(3);
    expect(Math.max(...depths)).toBe(7); // the depth gauge saw the backlog (10 keys, 3 taken at once)
    expect(depths[depths.length - 1]).toBe(0);
    await queue.stop();
  });

  it('takes a released slot again for another key, bounds the keys in hand, and waits for released handlers when stopping', async () => {
    const writing = deferred();
    const started: string[] = [];
    let holdingSlot = 0;
    let maxHoldingSlot = 0;
    let inHand = 0;
    let maxInHand = 0;
    const queue = new WorkQueue({
      name: 't',
      concurrency: 2,
      released: 3,
      handler: async (k, release) => {
        started.push(k);
        inHand++;
        holdingSlot++;
        maxInHand = Math.max(maxInHand, inHand);
        maxHoldingSlot = Math.max(maxHoldingSlot, holdingSlot);
        await Promise.resolve(); // the "token call"
        holdingSlot--;
        release();
        release(); // twice: gives back one slot, not two
        await writing.promise; // the "write", outside the slot
        inHand--;
      },
    });
    for (let i = 0; i < 8; i++) queue.add(`k${i}`);
    await new Promise((r) => setImmediate(r));
    // Slots were given back and taken again, up to 2 + 3 keys in hand; the other 3 wait.
    expect(started).toEqual(['k0', 'k1', 'k2', 'k3', 'k4']);
    expect(queue.active).toBe(0);
    expect(queue.depth).toBe(3);
    queue.add('k0'); // in hand though released: not run again meanwhile, but once more afterwards
    expect(started.filter((k) => k === 'k0')).toHaveLength(1);

    let stopped = false;
    const stopping = queue.stop().then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false); // five handlers still writing
    writing.resolve();
    await stopping;
    expect(inHand).toBe(0);
    expect(maxHoldingSlot).toBe(2);
    expect(maxInHand).toBe(5);
    expect(started).toHaveLength(5); // stopping dropped the waiting keys and the dirty k0
  });

  it('retries a failing key with exponentially growing delays and resets after a success', async () => {
    let calls = 0;
    const delays: number[] = [];
    const done = deferred();
    const queue = new WorkQueue({
      name: 't',
      concurrency: 1,
      backoff: { baseMs: 5, maxMs: 1000, jitter: 0 },
      handler: async (key) => {
        calls++;
        if (calls <= 3) {
          // record the delay the queue will use for this failure (attempt = failures so far + 1)
          delays.push(backoffDelay({ baseMs: 5, maxMs: 1000 }, queue.failuresOf(key) + 1));
          throw new Error(`fail ${calls}`);
        }
        done.resolve();
      },
    });
    queue.add('k');
    await done.promise;
    await queue.idle(); // the successful run has ended (its failure count reset)
    expect(calls).toBe(4);
    expect(delays).toEqual([5, 10, 20]);
    expect(queue.failuresOf('k')).toBe(0);
    await queue.stop();
  });

  it('drops a key whose handler failed for good, retries one that failed for now', async () => {
    const runs: Record<string, number> = { terminal: 0, transient: 0 };
    const dropped: Array<[string, string]> = [];
    const retried = deferred();
    const queue = new WorkQueue({
      name: 't',
      concurrency: 2,
      backoff: { baseMs: 1, maxMs: 1 },
      onTerminal: (key, err) => dropped.push([key, err.code]),
      handler: async (key) => {
        runs[key]!++;
        if (key === 'terminal') throw new TerminalError('invalid_input', 'status_rejected', 'refused as invalid');
        if (runs[key] === 1) throw new Error('API server unavailable');
        retried.resolve();
      },
    });
    queue.add('terminal');
    queue.add('transient');
    await retried.promise; // the transient failure came back after its backoff
    await queue.idle();
    expect(runs).toEqual({ terminal: 1, transient: 2 });
    expect(dropped).toEqual([['terminal', 'status_rejected']]);
    expect(queue.holds('terminal')).toBe(false); // no timer: nothing brings it back but an add
    expect(queue.failuresOf('terminal')).toBe(0);

    queue.add('terminal'); // the object changed
    await queue.idle();
    expect(runs.terminal).toBe(2);
    await queue.stop();
  });

  it('a status write refused as invalid is terminal; conflicts and outages are not', () => {
    const refused = Object.assign(new Error('HTTP 422'), { code: 422 });
    expect(() => terminalIfRefused(refused, 'Connection ns/c')).toThrow(TerminalError);
    expect(() => terminalIfRefused(refused, 'Connection ns/c')).toThrow(/^Connection ns\/c: the API server refused the status write/);
    for (const code of [409, 429, 500, 503]) {
      const err = Object.assign(new Error(`HTTP ${code}`), { code });
      let thrown: unknown;
      try {
        terminalIfRefused(err, 'Connection ns/c');
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBe(err);
    }
  });

  it('collapses delayed adds into the soonest and can be rescheduled later or removed', async () => {
    const ranJ = deferred();
    const { queue, seen } = recordingQueue((k) => {
      if (k === 'j') ranJ.resolve();
    });
    queue.addAfter('k', 60_000);
    const first = queue.scheduledAt('k')!;
    queue.addAfter('k', 120_000); // later: ignored
    expect(queue.scheduledAt('k')).toBe(first);
    queue.reschedule('k', 120_000); // explicit: moved
    expect(queue.scheduledAt('k')!).toBeGreaterThan(first);
    queue.remove('k');
    expect(queue.scheduledAt('k')).toBeUndefined();
    queue.addAfter('j', 5);
    expect(queue.scheduledAt('j')).toBeDefined();
    await ranJ.promise; // its timer queued it (Jest's timeout bounds the wait)
    await queue.idle();
    expect(seen).toEqual(['j']);
    await queue.stop();
  });

  it('holds a key while it runs, waits to run or waits on a timer, and not after', async () => {
    const { queue, gate } = queueHeldByBlock();
    queue.add('waiting');
    queue.addAfter('timer', 60_000);
    expect(['block', 'waiting', 'timer', 'other'].map((k) => queue.holds(k))).toEqual([true, true, true, false]);
    queue.remove('timer');
    gate.resolve();
    await queue.idle();
    expect(['block', 'waiting', 'timer'].map((k) => queue.holds(k))).toEqual([false, false, false]);
    await queue.stop();
  });
});

describe('backoffDelay', () => {
  it('doubles from the base up to the cap, and jitter only shortens', () => {
    const policy = { baseMs: 1000, maxMs: 60_000 };
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffDelay(policy, n))).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000]);
    expect(backoffDelay({ ...policy, jitter: 0.5 }, 3, () => 1)).toBe(2000);
    expect(backoffDelay({ ...policy, jitter: 0.5 }, 3, () => 0)).toBe(4000);
  });
});
