/**
 * The compaction after the first sync: it runs (V8 takes the options it is given), reports what it
 * did, and gives no global `gc` to the rest of the process. How much it saves is measured in
 * bench/memory.ts.
 */
import { compactHeap } from '../../src/app/compact-heap.js';
import type { Logger } from '../../src/app/log.js';

describe('compactHeap', () => {
  it('collects, logs the RSS before and after, and leaves no global gc behind', () => {
    const infos: Array<Record<string, unknown>> = [];
    const warnings: unknown[] = [];
    const logger = { info: (o: Record<string, unknown>) => infos.push(o), warn: (o: unknown) => warnings.push(o) } as unknown as Logger;
    compactHeap(logger, 'test');
    compactHeap(logger, 'test');
    expect(warnings).toEqual([]);
    expect(infos).toHaveLength(2);
    for (const info of infos) {
      expect(info.rssMiBBefore).toEqual(expect.any(Number));
      expect(info.rssMiBAfter).toEqual(expect.any(Number));
      expect(info.ms).toEqual(expect.any(Number));
    }
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
  });
});
