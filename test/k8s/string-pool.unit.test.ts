/**
 * The informers' string pool: cached objects keep their values (only the copies are shared), a
 * Secret's values never enter the pool, the pool stays bounded, and a deeply nested object is walked
 * only so far. What sharing saves is measured in bench/memory.ts, not here.
 */
import { StringPool, internStrings } from '../../src/k8s/string-pool.js';

const connection = (i: number) => ({
  apiVersion: 'latchkey.dev/v1alpha1',
  kind: 'Connection',
  metadata: { name: `github-c${i}`, namespace: 'team-a', uid: `uid-${i}`, labels: { 'latchkey.dev/integration': 'github' } },
  spec: { integration: 'github', provider: 'github', connectionId: `c${i}`, id: i, endUser: { id: `u${i}`, tags: ['a', 'b'] } },
  status: {
    conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: 'Credentials are stored.', observedGeneration: 1 }],
  },
});

describe('string pool', () => {
  it('leaves every value of an object as it was, and pools each distinct string once', () => {
    const pool = new StringPool();
    const objects = [connection(1), connection(2), connection(3)];
    for (const o of objects) internStrings(o, pool);
    expect(objects).toEqual([connection(1), connection(2), connection(3)]);
    // Shared by all three: apiVersion, kind, team-a, github, the label key is a key (not pooled), a, b,
    // Ready, True, the message; per object: name, uid, connectionId, end-user id.
    const sharedStrings = ['latchkey.dev/v1alpha1', 'Connection', 'team-a', 'github', 'a', 'b', 'Ready', 'True', 'Credentials are stored.'];
    expect(pool.size).toBe(sharedStrings.length + 3 * 4);
  });

  it("does not pool a Secret's data (nor anything under it)", () => {
    const pool = new StringPool();
    const secret = { metadata: { name: 's1', namespace: 'team-a' }, data: { 'credentials.json': 'c2VjcmV0', nested: { k: 'dmFsdWU=' } } };
    internStrings(secret, pool, new Set(['data']));
    expect(pool.size).toBe(2);
    expect(secret.data).toEqual({ 'credentials.json': 'c2VjcmV0', nested: { k: 'dmFsdWU=' } });
  });

  it('starts again empty when full, and leaves long strings alone', () => {
    const pool = new StringPool(10, 16);
    for (let i = 0; i < 25; i++) pool.intern(`value-${i}`);
    expect(pool.size).toBe(5);
    expect(pool.intern('x'.repeat(17))).toBe('x'.repeat(17));
    expect(pool.size).toBe(5);
  });

  it('walks a hostile, deeply nested object only so far, without throwing', () => {
    const pool = new StringPool();
    const deep: Record<string, unknown> = { s: 'top' };
    let at = deep;
    for (let i = 0; i < 100_000; i++) {
      const next: Record<string, unknown> = { s: 'deep' };
      at.next = next;
      at = next;
    }
    expect(() => internStrings(deep, pool)).not.toThrow();
    expect(pool.size).toBe(2);
    expect(deep.s).toBe('top');
  });
});
