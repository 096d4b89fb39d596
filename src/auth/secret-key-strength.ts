/**
 * Whether an Environment's secret key is strong enough. It authenticates every REST call of the
 * namespace and is the root of the keys that seal browser-held session tokens and OAuth state, so a
 * guessable key gives away the namespace. Latchkey does not generate it (platform teams keep it in
 * their own secret stores), so it refuses keys that cannot hold 128 bits: fewer than 32 characters,
 * or too few distinct characters, or too small an alphabet for their length.
 */
export const MIN_SECRET_KEY_LENGTH = 32;
const MIN_DISTINCT_CHARACTERS = 10;
const MIN_BITS = 128;

/** Why a key is too weak, for the Environment's condition; undefined when it is strong enough. */
export function secretKeyWeakness(key: string): string | undefined {
  if (key.length < MIN_SECRET_KEY_LENGTH) return `it has ${key.length} characters; at least ${MIN_SECRET_KEY_LENGTH} are required`;
  const distinct = new Set(key).size;
  if (distinct < MIN_DISTINCT_CHARACTERS) return `it uses only ${distinct} distinct characters`;
  if (estimatedBits(key) < MIN_BITS) return `it cannot hold ${MIN_BITS} bits of randomness`;
  return undefined;
}

/**
 * A generous estimate of the key's entropy: length × log2 of its alphabet, where the alphabet is the
 * smaller of what its character classes span and the distinct characters it actually uses (so
 * `password-password-…` counts 13 symbols, not 68).
 */
function estimatedBits(key: string): number {
  return key.length * Math.log2(Math.max(Math.min(classAlphabet(key), new Set(key).size), 2));
}

function classAlphabet(key: string): number {
  let alphabet = 0;
  if (/[a-z]/.test(key)) alphabet += 26;
  if (/[A-Z]/.test(key)) alphabet += 26;
  if (/[0-9]/.test(key)) alphabet += 10;
  if (/[^a-zA-Z0-9]/.test(key)) alphabet += 32;
  return alphabet;
}
