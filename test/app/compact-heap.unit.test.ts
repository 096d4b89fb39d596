/**
 * The compaction after the first sync: it runs (V8 takes the options it is given), reports what it
 * did, and gives the process's own global no `gc`. How much it saves is measured in bench/memory.ts.
 */
import { spawnSync } from 'node:child_process';
import { compactHeap } from '../../src/app/compact-heap.js';
import type { Logger } from '../../src/platform/log.js';
import { createRegistry } from '../../src/platform/metrics.js';

describe('compactHeap', () => {
  it('collects, logs the RSS before and after, and observes the pause by reason', async () => {
    const infos: Array<Record<string, unknown>> = [];
    const warnings: unknown[] = [];
    const logger = { info: (o: Record<string, unknown>) => infos.push(o), warn: (o: unknown) => warnings.push(o) } as unknown as Logger;
    const metrics = createRegistry();
    compactHeap(logger, 'caches synced', metrics);
    compactHeap(logger, 'reconcile wave done', metrics);
    expect(warnings).toEqual([]);
    const page = await metrics.metrics();
    expect(page).toMatch(/latchkey_heap_compaction_seconds_count\{reason="caches synced"\} 1\n/);
    expect(page).toMatch(/latchkey_heap_compaction_seconds_count\{reason="reconcile wave done"\} 1\n/);
    expect(infos).toHaveLength(2);
    for (const info of infos) {
      expect(info.rssMiBBefore).toEqual(expect.any(Number));
      expect(info.rssMiBAfter).toEqual(expect.any(Number));
      expect(info.ms).toEqual(expect.any(Number));
    }
  });

  // In a process of its own: V8 gives `gc` to every context made after the flag is set, so inside
  // Jest (a new context per test file) the answer would depend on which file ran first in the worker.
  it('leaves no global gc in the main context', () => {
    const module = new URL('../../src/app/compact-heap.js', import.meta.url).href;
    const script = `const { compactHeap } = await import(${JSON.stringify(module)});
      compactHeap({ info() {}, warn() {} }, 'caches synced');
      process.stdout.write(typeof globalThis.gc);`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(child.stdout).toBe('undefined');
  });
});
