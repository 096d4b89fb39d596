/**
 * Unit tests of the assignment of connections to controller replicas (no cluster needed): shares as
 * even as the keys allow, and a membership change moves only what it must.
 */
import { RendezvousHash } from '../../src/controller/rendezvous-hash.js';

const KEYS = Array.from({ length: 30_000 }, (_, i) => `storm-r3-k2x9q/conn-${i.toString(36)}`);

function owners(hashing: RendezvousHash): string[] {
  return KEYS.map((k) => hashing.ownerOf(k)!);
}

function shares(assigned: string[]): Map<string, number> {
  const n = new Map<string, number>();
  for (const m of assigned) n.set(m, (n.get(m) ?? 0) + 1);
  return n;
}

describe('RendezvousHash', () => {
  test('every replica of 3 gets close to a third (within what 30,000 keys allow)', () => {
    const members = ['latchkey-controller-7d9f8-abcde', 'latchkey-controller-7d9f8-fghij', 'latchkey-controller-7d9f8-klmno'];
    const counts = shares(owners(new RendezvousHash(members)));
    expect([...counts.keys()].sort()).toEqual(members);
    // Binomial: one standard deviation is 0.27 % of the keys; 1.5 % is more than five.
    for (const n of counts.values()) expect(Math.abs(n / KEYS.length - 1 / 3)).toBeLessThan(0.015);
  });

  test('the order members are given in and repeats do not change the assignment', () => {
    const a = owners(new RendezvousHash(['a', 'b', 'c']));
    expect(owners(new RendezvousHash(['c', 'a', 'b', 'a']))).toEqual(a);
  });

  test('removing a member moves only its keys, and spreads them over the others', () => {
    const before = owners(new RendezvousHash(['a', 'b', 'c']));
    const after = owners(new RendezvousHash(['a', 'b']));
    let movedFromC = 0;
    for (let i = 0; i < KEYS.length; i++) {
      if (before[i] === 'c') movedFromC++;
      else expect(after[i]).toBe(before[i]);
    }
    const received = shares(after.filter((_, i) => before[i] === 'c'));
    expect(received.get('a')! + received.get('b')!).toBe(movedFromC);
    expect(Math.abs(received.get('a')! / movedFromC - 0.5)).toBeLessThan(0.03);
  });

  test('adding a member takes about 1/N from each and moves nothing else', () => {
    const before = owners(new RendezvousHash(['a', 'b', 'c']));
    const after = owners(new RendezvousHash(['a', 'b', 'c', 'd']));
    const taken = new Map<string, number>();
    for (let i = 0; i < KEYS.length; i++) {
      if (after[i] === before[i]) continue;
      expect(after[i]).toBe('d');
      taken.set(before[i]!, (taken.get(before[i]!) ?? 0) + 1);
    }
    const total = [...taken.values()].reduce((a, b) => a + b, 0);
    expect(Math.abs(total / KEYS.length - 1 / 4)).toBeLessThan(0.015);
    for (const m of ['a', 'b', 'c']) expect(Math.abs(taken.get(m)! / total - 1 / 3)).toBeLessThan(0.03);
  });

  test('no members: no owner', () => {
    expect(new RendezvousHash([]).ownerOf('ns/conn')).toBeUndefined();
  });
});
