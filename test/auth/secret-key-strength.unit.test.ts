import { randomBytes } from 'node:crypto';
import { secretKeyWeakness } from '../../src/auth/secret-key-strength.js';

it.each([
  ['a short key', 'sk_live_12345'],
  ['a long key of one repeated character', 'a'.repeat(64)],
  ['a long key of few distinct characters', 'abcabcabcabcabcabcabcabcabcabcabcabc'],
  ['32 decimal digits (106 bits at most)', '12345678901234567890123456789012'],
  ['a repeated word', 'password-password-password-12345'],
])('refuses %s', (_what, key) => {
  expect(secretKeyWeakness(key)).toEqual(expect.any(String));
});

it.each([
  ['32 random bytes in hex (openssl rand -hex 32)', randomBytes(32).toString('hex')],
  ['16 random bytes in hex with a prefix', `sk_test_${randomBytes(16).toString('hex')}`],
  ['24 random bytes in base64url', randomBytes(24).toString('base64url')],
])('accepts %s', (_what, key) => {
  expect(secretKeyWeakness(key)).toBeUndefined();
});

it('says why without repeating the key', () => {
  const key = 'hunter2hunter2';
  expect(secretKeyWeakness(key)).not.toContain(key);
});
