/** Unit tests of the held-back status writes of refreshes (src/controller/deferred-status.ts): no cluster. */
import { DeferredStatus } from '../../src/controller/deferred-status.js';

describe('DeferredStatus', () => {
  it('hands every held key over on release, once, and reports its size', () => {
    const flushed: string[] = [];
    const sizes: number[] = [];
    const held = new DeferredStatus({ flush: (k) => flushed.push(k), onSize: (n) => sizes.push(n) });
    held.hold('ns/a');
    held.hold('ns/b');
    held.hold('ns/a');
    expect(held.size).toBe(2);
    held.delete('ns/b'); // another outcome asks for its reconcile itself
    held.release();
    held.release();
    expect(flushed).toEqual(['ns/a']);
    expect(sizes).toEqual([1, 2, 1, 0]);
    held.stop();
  });

  it('never holds a key longer than its bound', async () => {
    const flushed: string[] = [];
    const held = new DeferredStatus({ flush: (k) => flushed.push(k), maxDelayMs: 20 });
    held.hold('ns/a');
    await new Promise((r) => setTimeout(r, 10));
    held.hold('ns/b'); // held with the first: released at its bound
    expect(flushed).toEqual([]);
    await new Promise((r) => setTimeout(r, 60));
    expect(flushed).toEqual(['ns/a', 'ns/b']);
    expect(held.has('ns/a')).toBe(false);
    held.stop();
  });

  it('forgets its keys when stopped', async () => {
    const flushed: string[] = [];
    const held = new DeferredStatus({ flush: (k) => flushed.push(k), maxDelayMs: 10 });
    held.hold('ns/a');
    held.stop();
    await new Promise((r) => setTimeout(r, 30));
    expect(flushed).toEqual([]);
    expect(held.size).toBe(0);
  });
});
