/**
 * A bed a whole test file shares: started in `beforeAll`, closed in `afterAll`, read through the
 * object returned (a stand-in that forwards to the started bed, so tests write `bed.ns` instead of
 * declaring a variable per part and assigning each in `beforeAll`). `setup` runs once it has started
 * (it may read the bed through that object); the bed is closed even when `setup` fails.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { createTestNamespace } from '../../dev/cluster.js';

export function bedForFile<T extends object>(
  start: () => Promise<T & { close(): Promise<void> }>,
  setup?: () => Promise<void>,
  timeoutMs = 120_000,
): T {
  let started: (T & { close(): Promise<void> }) | undefined;
  beforeAll(async () => {
    started = await start();
    await setup?.();
  }, timeoutMs);
  afterAll(async () => {
    await started?.close();
  }, timeoutMs);
  return new Proxy({} as T, {
    get(_, key) {
      if (!started) throw new Error(`the file's bed is read before beforeAll started it (${String(key)})`);
      const value: unknown = Reflect.get(started, key);
      return typeof value === 'function' ? value.bind(started) : value;
    },
  });
}

/** A test namespace of the file's own, deleted after its tests. */
export function namespaceForFile(kc: KubeConfig, prefix: string): { name: string } {
  return bedForFile(async () => {
    const ns = await createTestNamespace(kc, prefix);
    return { name: ns.name, close: () => ns.delete() };
  });
}
